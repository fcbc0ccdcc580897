// The local stack the e2e tests, the benches and `npm start` run on (infra/local-stack.ts): a
// port taken by another process between `freePort` and the Worker binding it (test files start
// stacks side by side) makes it start again on fresh ports, instead of waiting out its timeout;
// and the Worker's V8 heap is capped as the platform caps an isolate's.
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import {
  freePort,
  type LocalStack,
  startLocalStack,
  workerdV8Flags,
} from "../../infra/local-stack.ts";

describe("local stack", () => {
  let stack: LocalStack | null = null;
  let squatter: Server | null = null;
  /** The squatter accepts and never answers: the probes' connections stay open until the end. */
  const held = new Set<Socket>();
  afterAll(async () => {
    await stack?.close();
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => (squatter ? squatter.close(resolve) : resolve(null)));
  }, 60_000);

  it("starts again on fresh ports when another process took the Worker's", async () => {
    const taken = await freePort();
    squatter = createServer((socket) => held.add(socket));
    await new Promise<void>((resolve) => squatter!.listen(taken, "127.0.0.1", resolve));
    const started = Date.now();
    stack = await startLocalStack("local-stack-port", { host: "node", workerPort: taken });
    expect(new URL(stack.workerUrl).port).not.toBe(String(taken));
    const health = await fetch(`${stack.workerUrl}/healthz`);
    expect(health.ok).toBe(true);
    // It gave up on the taken port when the Worker exited, not after the 120 s start timeout.
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 120_000);
});

describe("the Worker's V8 flags under wrangler dev", () => {
  it("cap the heap at the platform's 128 MB unless the caller chose flags of its own", () => {
    expect(workerdV8Flags({})).toBe("--max-heap-size=128");
    expect(workerdV8Flags({ MINIFLARE_WORKERD_V8_FLAGS: "" })).toBe("");
    expect(workerdV8Flags({ MINIFLARE_WORKERD_V8_FLAGS: "--max-semi-space-size=2" })).toBe(
      "--max-semi-space-size=2",
    );
  });
});
