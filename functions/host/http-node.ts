/**
 * HTTP for the portable host over `node:http` (Node, and the node:http of Bun and Deno): each
 * request becomes a Web `Request` for the Worker's `fetch`, its `Response` is written back,
 * streamed. `close` stops accepting and resolves once the requests in flight have answered.
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { clientAddress } from "../../shared/auth/client-address.ts";

export interface RunningHttp {
  port: number;
  close(): Promise<void>;
}

/**
 * Cloudflare's own limit on a request body (Free and Pro plans): a Worker never sees a larger
 * one, so neither does the Worker here. The routes' own limits (webhooks, `/v1`) are smaller
 * and apply on both hosts alike; this is the backstop for every other route.
 */
export const MAX_REQUEST_BODY_BYTES = 100 * 1024 * 1024;

/** The body was larger than the host's limit (answered 413, whatever the handler said). */
class BodyTooLarge extends Error {
  override name = "BodyTooLarge";
}

interface Body {
  stream: ReadableStream<Uint8Array>;
  /** Reads and drops what the handler left unread (up to the limit; beyond it the socket ends). */
  discard(): void;
  overflowed(): boolean;
}

/**
 * The request body as a Web stream, read as the handler pulls, never past `limit` bytes: the
 * stream errors there, and the answer is a 413. What the handler leaves unread (it stopped at
 * the webhook body limit) is read and dropped by `discard`, so the client gets its answer (a
 * 413) instead of a connection reset, but only up to `limit`: a client streaming without end
 * gets its connection closed.
 */
function bodyStream(req: IncomingMessage, limit: number, ended: () => void): Body {
  let done = false;
  let received = 0;
  let overflow = false;
  const discard = () => {
    done = true;
    req.resume();
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      req.pause();
      req.on("data", (chunk: Buffer) => {
        received += chunk.byteLength;
        if (received > limit) {
          if (!overflow) {
            overflow = true;
            if (!done) controller.error(new BodyTooLarge(`the body is over ${limit} bytes`));
            done = true;
            // Reading on past the limit is what the limit is against: the connection ends
            // once the answer (a 413) is out.
            req.pause();
            ended();
          }
          return;
        }
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
  return { stream, discard, overflowed: () => overflow };
}

/**
 * The path and query the client asked for. An absolute request target
 * (`GET http://other.example/x`) gives only its path and query: the origin is the server's.
 */
function requestPath(target: string | undefined): string {
  if (!target || target === "*") return "/";
  if (target.startsWith("/")) return target;
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return "/";
  }
}

/** `::ffff:127.0.0.1` (an IPv4 client of a dual-stack socket) as `127.0.0.1`. */
function normalAddress(address: string | undefined): string {
  if (!address) return "unknown";
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

function toRequest(
  req: IncomingMessage,
  origin: string,
  limit: number,
  trustedProxies: number,
  ended: () => void,
): { request: Request; body: Body | null } {
  // From the listening address, never from `Host`: a crafted Host header must not change what
  // the Worker takes its own URL to be (login callbacks, OpenAPI servers, origin checks).
  const url = `${origin}${requestPath(req.url)}`;
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  // The client's address, as Cloudflare gives it to a Worker (and a client cannot set it): the
  // socket's peer, or behind the operator's trusted proxies the address they vouch for.
  headers.set(
    "cf-connecting-ip",
    clientAddress(
      normalAddress(req.socket.remoteAddress),
      headers.get("x-forwarded-for"),
      trustedProxies,
    ),
  );
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  const body = hasBody ? bodyStream(req, limit, ended) : null;
  const request = new Request(url, {
    method,
    headers,
    ...(body ? { body: body.stream, duplex: "half" } : {}),
  } as RequestInit);
  return { request, body };
}

function tooLarge(limit: number): Response {
  return Response.json(
    { error: "too-large", message: `the request body is over ${limit} bytes` },
    { status: 413 },
  );
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
  options: {
    port: number;
    hostname: string;
    log: (message: string, error?: unknown) => void;
    /** The largest request body taken (default: Cloudflare's, `MAX_REQUEST_BODY_BYTES`). */
    maxBodyBytes?: number;
    /** Reverse proxies in front whose `X-Forwarded-For` entries are believed (default 0). */
    trustedProxies?: number;
  },
): Promise<RunningHttp> {
  const limit = options.maxBodyBytes ?? MAX_REQUEST_BODY_BYTES;
  let origin = "";
  const server = createServer((req, res) => {
    void (async () => {
      const declared = Number(req.headers["content-length"] ?? Number.NaN);
      if (Number.isFinite(declared) && declared > limit) {
        // Refused before anything is read; the connection ends with the answer.
        res.once("finish", () => req.socket.destroy());
        await writeResponse(tooLarge(limit), req, res, () => {});
        return;
      }
      // Over the limit: the socket closes once the answer is written.
      const endConnection = () => {
        if (res.writableFinished) req.socket.destroy();
        else res.once("finish", () => req.socket.destroy());
      };
      let body: Body | null = null;
      try {
        const built = toRequest(req, origin, limit, options.trustedProxies ?? 0, endConnection);
        body = built.body;
        let response = await handler(built.request).catch((error: unknown) => {
          if (body?.overflowed()) return tooLarge(limit);
          throw error;
        });
        if (body?.overflowed()) response = tooLarge(limit);
        const discard = body ? body.discard : () => {};
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
      const host = options.hostname.includes(":") ? `[${options.hostname}]` : options.hostname;
      origin = `http://${host}:${port}`;
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
