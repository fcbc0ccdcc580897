// Where the login sends the browser back: a path on this origin only. Browsers drop tabs and
// newlines from URLs and read `\` as `/`, so `/\t/evil.example` would be `//evil.example`.
import { describe, expect, it } from "vitest";
import { safeReturnTo } from "../../../shared/status/return-to.ts";

const ORIGIN = "https://switchyard.test";

describe("safeReturnTo", () => {
  it("keeps a path on this origin whole, dots, query and fragment included", () => {
    for (const path of ["/", "/repos/acme/site.io", "/repos/a/b?x=1.2#top", "/repos/a/b%2Fc"]) {
      expect(safeReturnTo(path, ORIGIN)).toBe(path);
    }
  });

  it("sends anything that could leave the origin home", () => {
    for (const value of [
      "/\t/evil.example",
      "/\n/evil.example",
      "/\r/evil.example",
      "/\u0000/x",
      "/\u007f/x",
      "//evil.example",
      "/\\evil.example",
      "\\/evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
      " /repos/a/b",
      "repos/a/b",
      "",
      null,
      undefined,
      `/${"a".repeat(3000)}`,
    ]) {
      expect(safeReturnTo(value, ORIGIN), JSON.stringify(value)).toBe("/");
    }
  });

  it("keeps a path that stays on this origin once the browser resolves it", () => {
    expect(safeReturnTo("/.//evil.example", ORIGIN)).toBe("/.//evil.example");
    expect(new URL("/.//evil.example", ORIGIN).origin).toBe(ORIGIN);
    expect(safeReturnTo("/%2F/evil.example", ORIGIN)).toBe("/%2F/evil.example");
  });
});
