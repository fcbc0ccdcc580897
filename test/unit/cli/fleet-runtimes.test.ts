// `switchyard work` under Node, Bun and Deno: child processes, inherited stdout and Ctrl-C go
// through node:child_process and node:process, which each runtime provides its own way. The
// fleet API is the in-memory fake behind a loopback HTTP server.
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUNTIMES, type Runtime, root } from "../../support/runtimes.ts";
import { FakeFleet } from "../fleet/fake-fleet.ts";

let fleet: FakeFleet;
let server: Server;
let url: string;

beforeAll(async () => {
  fleet = new FakeFleet([]);
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const answer = await fleet.fetch(`http://fleet.test${req.url}`, {
      method: req.method,
      headers: req.headers as Record<string, string>,
      body: body.length > 0 ? body : undefined,
    });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function work(runtime: Runtime, flags: string[], command: string[]) {
  const [bin, ...prefix] = RUNTIMES[runtime];
  const child = spawn(
    bin,
    [
      ...prefix, // ends with functions/cli/bin.ts
      "work",
      "--server",
      url,
      "--repo",
      "acme/app",
      "--agent-id",
      `bot-${runtime}`,
      ...flags,
      "--",
      ...command,
    ],
    { cwd: root, env: { ...process.env, NO_COLOR: "1", SWITCHYARD_TOKEN: "fleet-key" } },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const code = new Promise<number | null>((resolve) => child.on("close", resolve));
  return { child, code, stdout: () => stdout, stderr: () => stderr };
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const runtimes: Runtime[] = ["node", "bun", "deno"];

describe.each(runtimes)("switchyard work under %s", (runtime) => {
  it("runs the command with the claim in its environment and releases by its exit code", async () => {
    fleet.queue = [10];
    const run = work(
      runtime,
      ["--once"],
      [
        process.execPath,
        "-e",
        "console.log('child', process.env.SWITCHYARD_ISSUE, process.env.SWITCHYARD_FENCE); process.exit(3)",
      ],
    );
    expect(await run.code).toBe(0);
    const fence = fleet.fence;
    expect(run.stdout()).toBe(`child 10 ${fence}\n`);
    expect(fleet.released.at(-1)).toEqual({
      number: 10,
      fence,
      outcome: "failed",
      note: "exit code 3",
    });
  }, 30_000);

  it("on SIGINT stops the command, releases abandoned and exits 130", async () => {
    fleet.queue = [20];
    const run = work(
      runtime,
      [],
      [
        process.execPath,
        "-e",
        "process.on('SIGTERM', () => { console.log('child stopped'); process.exit(143); }); console.log('ready'); setInterval(() => {}, 1000)",
      ],
    );
    await until("the command to start", () => run.stdout().includes("ready"));
    run.child.kill("SIGINT");
    expect(await run.code).toBe(130);
    expect(run.stdout()).toBe("ready\nchild stopped\n");
    expect(fleet.released.at(-1)).toMatchObject({ number: 20, outcome: "abandoned" });
    expect(fleet.live.size).toBe(0);
  }, 30_000);
});
