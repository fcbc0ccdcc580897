// The portable host's HTTP layer (functions/host/http-node.ts): the Worker's URL is built from
// the listening address, never from the client's `Host` or an absolute request target (a
// crafted one would re-route the request), and a body larger than the platform's request limit
// is refused with 413 before the Worker reads it, declared or streamed.
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningHttp, serveHttp } from "../../../functions/host/http-node.ts";

const running: RunningHttp[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await server.close();
});

interface Seen {
  url: string;
  host: string | null;
  client: string | null;
  bytes: number;
}

async function start(maxBodyBytes?: number, trustedProxies?: number) {
  const seen: Seen[] = [];
  const server = await serveHttp(
    async (request) => {
      const body = request.body ? new Uint8Array(await request.arrayBuffer()) : new Uint8Array();
      seen.push({
        url: request.url,
        host: request.headers.get("host"),
        client: request.headers.get("cf-connecting-ip"),
        bytes: body.byteLength,
      });
      return new Response("ok");
    },
    {
      port: 0,
      hostname: "127.0.0.1",
      log: () => {},
      ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
      ...(trustedProxies === undefined ? {} : { trustedProxies }),
    },
  );
  running.push(server);
  return { server, seen };
}

/** Sends `raw` bytes as they are and returns the whole answer (the server closes or it ends). */
function rawRequest(port: number, raw: string | Uint8Array[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
      if (/\r\n\r\n/.test(answer) && /content-length: 0|\r\n\r\nok$|413/i.test(answer)) {
        socket.end();
      }
    });
    socket.on("close", () => resolve(answer));
    socket.on("error", (error) => (answer ? resolve(answer) : reject(error)));
    socket.setTimeout(5_000, () => socket.destroy());
    if (typeof raw === "string") socket.write(raw);
    else for (const part of raw) socket.write(part);
  });
}

describe("switchyard serve's HTTP layer", () => {
  it("builds the URL from the listening address, whatever Host says", async () => {
    const { server, seen } = await start();
    const answer = await rawRequest(
      server.port,
      "GET /v1/repos/a/b/graph?x=1 HTTP/1.1\r\nHost: evil.example:1\r\nConnection: close\r\n\r\n",
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(seen[0]!.url).toBe(`http://127.0.0.1:${server.port}/v1/repos/a/b/graph?x=1`);
    // The header itself still reaches the Worker (it is the client's word, nothing more).
    expect(seen[0]!.host).toBe("evil.example:1");
  });

  it("names the client by its socket's address in CF-Connecting-IP, whatever the client sent", async () => {
    const { server, seen } = await start();
    const answer = await rawRequest(
      server.port,
      "GET /healthz HTTP/1.1\r\nHost: a\r\nCF-Connecting-IP: 192.0.2.1\r\nConnection: close\r\n\r\n",
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(seen[0]!.client).toBe("127.0.0.1");
  });

  it("believes X-Forwarded-For only as far as the trusted proxies go", async () => {
    const request = (xff: string) =>
      `GET /healthz HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: ${xff}\r\nConnection: close\r\n\r\n`;
    const untrusted = await start();
    await rawRequest(untrusted.server.port, request("203.0.113.7"));
    expect(untrusted.seen[0]!.client).toBe("127.0.0.1");
    // One proxy (the peer, 127.0.0.1) appended the client; the client forged 1.1.1.1 before it.
    const behindOne = await start(undefined, 1);
    await rawRequest(behindOne.server.port, request("1.1.1.1, 203.0.113.7"));
    expect(behindOne.seen[0]!.client).toBe("203.0.113.7");
  });

  it("takes only the path and query of an absolute request target", async () => {
    const { server, seen } = await start();
    const answer = await rawRequest(
      server.port,
      "GET http://evil.example/healthz?y=2 HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(seen[0]!.url).toBe(`http://127.0.0.1:${server.port}/healthz?y=2`);
  });

  it("refuses a declared body over the limit with 413 before the Worker runs", async () => {
    const { server, seen } = await start(1_000);
    const response = await fetch(`http://127.0.0.1:${server.port}/v1/x`, {
      method: "POST",
      body: "x".repeat(1_001),
    });
    expect(response.status).toBe(413);
    expect(await response.text()).toMatch(/1000 bytes/);
    expect(seen).toEqual([]);
    // At the limit it goes through.
    const fits = await fetch(`http://127.0.0.1:${server.port}/v1/x`, {
      method: "POST",
      body: "x".repeat(1_000),
    });
    expect(fits.status).toBe(200);
    expect(seen.at(-1)!.bytes).toBe(1_000);
  });

  it("refuses a streamed (chunked) body over the limit with 413; the Worker never gets it all", async () => {
    const { server, seen } = await start(1_000);
    const chunk = (n: number) => `${n.toString(16)}\r\n${"y".repeat(n)}\r\n`;
    const answer = await rawRequest(
      server.port,
      `POST /v1/x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(600)}${chunk(600)}0\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(seen.every((s) => s.bytes <= 1_000)).toBe(true);
  });
});
