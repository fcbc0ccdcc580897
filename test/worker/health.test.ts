import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

describe("GET /healthz", () => {
  it("reports the version, reachable storage and the missing secrets", async () => {
    const response = await exports.default.fetch("https://switchyard.test/healthz");
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: "ok", storage: "ok", version: "0.1.0" });
    expect(body.missingSettings).toEqual([]);
    // The first request of the file loads the whole Worker bundle into workerd (seconds).
  }, 30_000);

  it("answers unknown routes with a JSON 404", async () => {
    const response = await exports.default.fetch("https://switchyard.test/nope");
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: "not-found",
      message: "no route for GET /nope",
    });
  });
});
