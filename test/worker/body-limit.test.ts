// `/v1` request bodies are read up to FLEET_BODY_MAX_BYTES and no further, on every host (the
// limit is the Worker's own, not the platform's): a larger body, declared or streamed, is 413
// before the caller is proven and before any Durable Object is asked.
import { describe, expect, it } from "vitest";
import { app } from "../../functions/app.ts";
import { FLEET_BODY_MAX_BYTES } from "../../shared/fleet/limits.ts";
import { trapped } from "./helpers.ts";

const BEARER = "Bearer gho_body_limit_test";

/** A JSON body of `size` bytes, sent with its length or as a stream without one. */
function body(size: number, streamed: boolean): BodyInit {
  const text = `{"note":"${"x".repeat(size - 11)}"}`;
  expect(new TextEncoder().encode(text).byteLength).toBe(size);
  if (!streamed) return text;
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.byteLength; at += 64 * 1024) {
        controller.enqueue(bytes.slice(at, at + 64 * 1024));
      }
      controller.close();
    },
  });
}

async function post(path: string, payload: BodyInit) {
  const { bindings, touched } = trapped();
  const response = await app.request(
    `https://switchyard.test${path}`,
    {
      method: "POST",
      headers: { authorization: BEARER, "content-type": "application/json" },
      body: payload,
      duplex: "half",
    } as RequestInit,
    bindings,
  );
  return { status: response.status, text: await response.text(), touched };
}

describe("/v1 body limit", () => {
  it.each([
    ["declared", false],
    ["streamed", true],
  ])("refuses a %s body over the limit with 413, asking nobody", async (_, streamed) => {
    for (const path of [
      "/v1/repos/acme/app/issues/1/claim",
      "/v1/repos/acme/app/claims",
      "/v1/repos/acme/app/issues/1/comments",
      "/v1/repos/acme/app/keys",
    ]) {
      const answer = await post(path, body(FLEET_BODY_MAX_BYTES + 1, streamed));
      expect(answer.status, path).toBe(413);
      expect(JSON.parse(answer.text)).toEqual({
        error: "too-large",
        message: `the request body is over ${FLEET_BODY_MAX_BYTES} bytes`,
      });
      expect(answer.touched, path).toEqual([]);
    }
  });

  it("a body at the limit goes on to authentication", async () => {
    const answer = await post(
      "/v1/repos/acme/app/issues/1/claim",
      body(FLEET_BODY_MAX_BYTES, true),
    );
    expect(answer.status).not.toBe(413);
    expect(answer.touched.length).toBeGreaterThan(0);
  });
});
