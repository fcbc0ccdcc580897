import { describe, expect, it } from "vitest";
import { liveHolder, resolveClaims } from "../../../shared/idd/claims.ts";
import { renderClaimedBy } from "../../../shared/idd/comment-markers.ts";
import { parseCommentList } from "../../../shared/idd/comments.ts";
import { decodeEntitiesDeep } from "../../../shared/idd/html-entities.ts";
import { maskCode, visibleProse } from "../../../shared/idd/markdown-code.ts";
import { isMarkerTimestamp, truncateToSecond } from "../../../shared/idd/timestamp.ts";

describe("maskCode", () => {
  it("blanks fenced, tilde, indented and inline code but keeps offsets and line breaks", () => {
    const text = "a `b` c\n\n~~~\nx\n~~~\n\n    indented\n\nd";
    const masked = maskCode(text);
    expect(masked).toHaveLength(text.length);
    expect(masked).toBe("a     c\n\n   \n \n   \n\n            \n\nd");
  });

  it("treats an unclosed fence as code to the end", () => {
    expect(maskCode("x\n```\n<!-- requires: a -->").trim()).toBe("x");
  });

  it("leaves an HTML comment containing backticks alone", () => {
    const text = '<!-- sweep-trace: {"val":"`x`"} -->';
    expect(maskCode(text)).toBe(text);
  });
});

describe("visibleProse", () => {
  it("decodes entities, then drops code and HTML comments", () => {
    expect(visibleProse("ok &lt;!-- x: 1 --&gt; `y` z").replace(/ +/g, " ")).toBe("ok z");
  });
});

describe("decodeEntitiesDeep", () => {
  it("undoes single and double escaping", () => {
    expect(decodeEntitiesDeep("&lt;!--")).toBe("<!--");
    expect(decodeEntitiesDeep("&amp;lt;!-- &amp;quot;a&amp;quot;")).toBe('<!-- "a"');
    expect(decodeEntitiesDeep("AT&T &#60;")).toBe("AT&T <");
  });
});

describe("timestamps", () => {
  it("accepts only real second-precision UTC instants", () => {
    expect(isMarkerTimestamp("2028-02-29T23:59:59Z")).toBe(true);
    expect(isMarkerTimestamp("2027-02-29T00:00:00Z")).toBe(false);
    expect(isMarkerTimestamp("2026-11-01T24:00:00Z")).toBe(false);
    expect(isMarkerTimestamp("2026-11-01T00:00:00+00:00")).toBe(false);
  });

  it("truncates, never rounds", () => {
    expect(truncateToSecond("2026-11-01T00:00:00.999Z")).toBe("2026-11-01T00:00:00Z");
    expect(truncateToSecond("2026-11-01T01:00:00.500+01:00")).toBe("2026-11-01T00:00:00Z");
  });
});

describe("comment lists", () => {
  it("accepts the gh issue view wrapper and REST field names", () => {
    const list = parseCommentList({
      comments: [{ created_at: "2026-11-01T00:00:00Z", user: { login: "a" }, body: null }],
    });
    expect(list).toEqual([{ createdAt: "2026-11-01T00:00:00Z", author: { login: "a" }, body: "" }]);
  });

  it("names the first bad path", () => {
    expect(() =>
      parseCommentList([{ createdAt: "2026-11-01T00:00:00Z", author: {}, body: "" }]),
    ).toThrow("invalid comment list at [0].author.login");
  });
});

describe("liveHolder", () => {
  const claim = (at: string) => ({
    createdAt: at,
    author: { login: "switchyard[bot]", type: "Bot" },
    body: renderClaimedBy({
      agentId: "fleet-1",
      claimId: "k1",
      supersedes: null,
      timestamp: at,
      branch: "issue/3-x",
    }),
  });

  it("names the holder a Worker must respect, and when it goes stale", () => {
    const result = resolveClaims([claim("2026-11-01T00:00:00Z")], { now: "2026-11-01T01:00:00Z" });
    expect(liveHolder(result)).toEqual({
      agentId: "fleet-1",
      claimId: "k1",
      branch: "issue/3-x",
      staleAt: "2026-11-02T00:00:00Z",
    });
  });

  it("is null once the claim is stale", () => {
    const result = resolveClaims([claim("2026-11-01T00:00:00Z")], { now: "2026-11-03T00:00:00Z" });
    expect(result.state).toBe("stale");
    expect(liveHolder(result)).toBeNull();
  });
});
