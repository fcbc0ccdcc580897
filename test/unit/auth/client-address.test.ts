// The client's address behind reverse proxies (shared/auth/client-address.ts): only the
// proxies the operator trusts are believed; a forged X-Forwarded-For prefix proves nothing.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  clientAddress,
  MAX_TRUSTED_PROXIES,
  parseTrustedProxies,
} from "../../../shared/auth/client-address.ts";

describe("clientAddress", () => {
  it("is the peer when no proxy is trusted, whatever the client sent", () => {
    expect(clientAddress("10.0.0.9", "1.2.3.4", 0)).toBe("10.0.0.9");
    expect(clientAddress("10.0.0.9", null, 2)).toBe("10.0.0.9");
  });

  it("takes the address the trusted proxies vouch for, not a forged one further left", () => {
    // client 203.0.113.7 forged "1.1.1.1"; the one proxy (10.0.0.2) appended the client.
    expect(clientAddress("10.0.0.2", "1.1.1.1, 203.0.113.7", 1)).toBe("203.0.113.7");
    // Two proxies: CDN appended the client, the local proxy appended the CDN.
    expect(clientAddress("127.0.0.1", "1.1.1.1,203.0.113.7, 198.51.100.4", 2)).toBe("203.0.113.7");
  });

  it("falls back to the leftmost vouched entry when a request skipped a proxy", () => {
    expect(clientAddress("127.0.0.1", "203.0.113.7", 3)).toBe("203.0.113.7");
  });

  it("never returns an address the client could have chosen when all hops are trusted", () => {
    fc.assert(
      fc.property(
        fc.array(fc.ipV4(), { maxLength: 4 }),
        fc.array(fc.ipV4(), { minLength: 1, maxLength: 4 }),
        (forged, hops) => {
          // hops[0] is the real client; each proxy appends who it heard from; peer is last.
          const appended = hops.slice(0, -1);
          const header = [...forged, ...appended].join(", ");
          const peer = hops[hops.length - 1]!;
          const trusted = hops.length - 1;
          expect(clientAddress(peer, header || null, trusted)).toBe(hops[0]);
        },
      ),
    );
  });
});

describe("parseTrustedProxies", () => {
  it("takes 0 to the bound and names a bad value", () => {
    expect(parseTrustedProxies(undefined)).toBe(0);
    expect(parseTrustedProxies("2")).toBe(2);
    expect(parseTrustedProxies(String(MAX_TRUSTED_PROXIES + 1))).toMatch(/whole number/);
    expect(parseTrustedProxies("one")).toMatch(/got one/);
  });
});
