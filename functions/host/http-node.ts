/**
 * HTTP for the portable host over `node:http` (Node, and the node:http of Bun and Deno): each
 * request becomes a Web `Request` for the Worker's `fetch`, its `Response` is written back,
 * streamed. `close` stops accepting and resolves once the requests in flight have answered.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RunningHttp {
  port: number;
  close(): Promise<void>;
}

/**
 * The request body as a Web stream, read as the handler pulls. What the handler leaves unread
 * (it stopped at the webhook body limit) is read and dropped by `discard`, so the client gets
 * its answer (a 413) instead of a connection reset.
 */
function bodyStream(req: IncomingMessage): { stream: ReadableStream<Uint8Array>; discard(): void } {
  let done = false;
  const discard = () => {
    done = true;
    req.resume();
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      req.pause();
      req.on("data", (chunk: Buffer) => {
        if (done) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) req.pause();
      });
      req.once("end", () => {
        if (!done) controller.close();
        done = true;
      });
      req.once("error", (error) => {
        if (!done) controller.error(error);
        done = true;
      });
    },
    pull() {
      req.resume();
    },
    cancel: discard,
  });
  return { stream, discard };
}

function toRequest(
  req: IncomingMessage,
  fallbackHost: string,
): { request: Request; discard(): void } {
  const url = `http://${req.headers.host ?? fallbackHost}${req.url ?? "/"}`;
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  const body = hasBody ? bodyStream(req) : null;
  const request = new Request(url, {
    method,
    headers,
    ...(body ? { body: body.stream, duplex: "half" } : {}),
  } as RequestInit);
  return { request, discard: () => body?.discard() };
}

async function writeResponse(
  response: Response,
  req: IncomingMessage,
  res: ServerResponse,
  discard: () => void,
): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  if (!req.complete) {
    // Answered before the body was read to its end: drop the rest, and end the connection
    // after this answer rather than reuse it.
    discard();
    headers.connection = "close";
  }
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
        const { request, discard } = toRequest(req, `${options.hostname}:${options.port}`);
        const response = await handler(request);
        await writeResponse(response, req, res, discard);
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
