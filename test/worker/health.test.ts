import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Env } from "../../functions/env.ts";
import { health } from "../../functions/routes/health.ts";

const get = (bindings: Env) => health.request("https://switchyard.test/healthz", {}, bindings);

describe("GET /healthz", () => {
  it("answers only whether storage is reachable", async () => {
    const response = await exports.default.fetch("https://switchyard.test/healthz");
    expect(response.status).toBe(200);
    // No version, no setting names: nothing an anonymous caller could use.
    expect(await response.json()).toEqual({ ok: true });
    // The first request of the file loads the whole Worker bundle into workerd (seconds).
  }, 30_000);

  it("answers 503 {ok: false} when Durable Object storage is unreachable", async () => {
    const unreachable = {
      ...env,
      DIRECTORY: {
        idFromName: () => {
          throw new Error("storage is down");
        },
      },
    } as unknown as Env;
    const response = await get(unreachable);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ ok: false });
    const detailed = await get({ ...unreachable, HEALTH_DETAILS: "1" });
    expect(detailed.status).toBe(503);
    expect(await detailed.json()).toMatchObject({ ok: false, version: "0.1.0" });
  });

  it("names the version and the missing settings with HEALTH_DETAILS=1", async () => {
    const response = await get({ ...env, HEALTH_DETAILS: "1" });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, version: "0.1.0", missingSettings: [] });
    const missing = await get({
      ...env,
      HEALTH_DETAILS: "1",
      GITHUB_APP_ID: undefined,
      GITHUB_APP_PRIVATE_KEY: "",
    });
    expect(await missing.json()).toEqual({
      ok: true,
      version: "0.1.0",
      missingSettings: ["GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY"],
    });
    // Any other value keeps the answer minimal.
    expect(await (await get({ ...env, HEALTH_DETAILS: "0" })).json()).toEqual({ ok: true });
  });

  it("answers unknown routes with a JSON 404", async () => {
    const response = await exports.default.fetch("https://switchyard.test/nope");
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: "not-found",
      message: "no route for GET /nope",
    });
  });
});
