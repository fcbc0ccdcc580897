import { describe, expect, it } from "vitest";
import { removalVerdict } from "../../../shared/ingest/confirm.ts";

describe("removalVerdict (a confirming GET, redirects not followed)", () => {
  it("reads 301 as transferred, 404 and 410 as gone, 200 as still here", () => {
    expect(removalVerdict(301)).toBe("transferred");
    expect(removalVerdict(404)).toBe("gone");
    expect(removalVerdict(410)).toBe("gone");
    expect(removalVerdict(200)).toBe("here");
  });

  it("takes nothing else as an answer", () => {
    for (const status of [302, 304, 403, 500, 502]) expect(() => removalVerdict(status)).toThrow();
  });
});
