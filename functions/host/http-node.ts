/**
 * HTTP for the portable host over `node:http` (Node, and the node:http of Bun and Deno): each
 * request becomes a Web `Request` for the Worker's `fetch`, its `Response` is written back,
 * streamed. `close` stops accepting and resolves once the requests in flight have answered.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";

export interface RunningHttp {
  port: number;
  close(): Promise<void>;
}

function toRequest(req: IncomingMessage, fallbackHost: string): Request {
  const url = `http://${req.headers.host ?? fallbackHost}${req.url ?? "/"}`;
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(url, {
    method,
    headers,
    ...(hasBody
      ? { body: Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>, duplex: "half" }
      : {}),
  } as RequestInit);
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    if (key !== "set-cookie") headers[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  res.writeHead(response.status, response.statusText, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve));
  }
  res.end();
}

export function serveHttp(
  handler: (request: Request) => Promise<Response>,
  options: { port: number; hostname: string; log: (message: string, error?: unknown) => void },
): Promise<RunningHttp> {
  const server = createServer((req, res) => {
    void (async () => {
      try {
        const response = await handler(toRequest(req, `${options.hostname}:${options.port}`));
        await writeResponse(response, res);
      } catch (error) {
        options.log("http: request failed", error);
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end("internal error");
      }
    })();
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
          }),
      });
    });
  });
}
