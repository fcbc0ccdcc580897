// Node-only entry: serves the simulator over real HTTP (node:http), so tests and the local
// demo can reach it by URL. The simulator itself stays Web-standard (app.ts).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createGitHubSimulator, type GitHubSimulator, type SimulatorOptions } from "./app.ts";

export interface RunningSimulator {
  url: string;
  port: number;
  sim: GitHubSimulator;
  close(): Promise<void>;
}

async function toRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const method = req.method ?? "GET";
  const body =
    chunks.length > 0 && method !== "GET" && method !== "HEAD" ? Buffer.concat(chunks) : undefined;
  return new Request(new URL(req.url ?? "/", origin), { method, headers, body });
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  if (response.headers.get("x-sim-fault") === "network") {
    // The simulated network failure: the client sees the connection drop.
    res.socket?.destroy();
    return;
  }
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  res.writeHead(response.status, headers);
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** Starts the simulator on 127.0.0.1 (port 0 picks a free one). */
export async function startSimulatorServer(
  opts: SimulatorOptions & { port?: number; host?: string; sim?: GitHubSimulator } = {},
): Promise<RunningSimulator> {
  const sim = opts.sim ?? createGitHubSimulator(opts);
  const host = opts.host ?? "127.0.0.1";
  let origin = `http://${host}`;
  const server = createServer((req, res) => {
    toRequest(req, origin)
      .then((request) => sim.fetch(request))
      .then((response) => send(res, response))
      .catch((error: unknown) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: `simulator server error: ${String(error)}` }));
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  origin = `http://${host}:${port}`;
  if (!opts.publicUrl) sim.publicUrl = origin;
  return {
    url: origin,
    port,
    sim,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
