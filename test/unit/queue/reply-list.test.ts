import { describe, expect, it } from "vitest";
import { replyList, replyReasonText } from "../../../shared/queue/reply-list.ts";
import type { Reply, ReplyReason } from "../../../shared/queue/reply-state.ts";

const reply = (n: number, reason: ReplyReason = "unanswered-human-comment"): Reply => ({
  reason,
  url: `https://github.com/o/r/issues/${n}#issuecomment-${n}00`,
  author: "octocat",
  at: "2026-11-29T10:00:00Z",
});

describe("the replies list", () => {
  it("is by number, each entry with who holds the issue: a claim wins over a marker", () => {
    const list = replyList(
      new Map([
        [9, reply(9)],
        [3, reply(3, "deferred-response")],
        [5, reply(5)],
      ]),
      {
        claims: [
          { number: 9, agentId: "a", kind: "reply", until: "2026-11-29T11:00:00Z" },
          { number: 4, agentId: "w", kind: "work", until: "2026-11-29T11:00:00Z" },
        ],
        idd: new Map([
          [9, { agentId: "a", staleAt: "2026-11-30T00:00:00Z" }],
          [5, { agentId: "idd-agent", staleAt: "2026-11-30T00:00:00Z" }],
        ]),
      },
    );
    expect(list.map((e) => [e.number, e.reason, e.claim])).toEqual([
      [3, "deferred-response", null],
      [
        5,
        "unanswered-human-comment",
        { agentId: "idd-agent", kind: "idd", until: "2026-11-30T00:00:00Z" },
      ],
      [
        9,
        "unanswered-human-comment",
        { agentId: "a", kind: "reply", until: "2026-11-29T11:00:00Z" },
      ],
    ]);
    expect(list[0]).toMatchObject({ url: reply(3).url, author: "octocat", at: reply(3).at });
  });

  it("says why every reason counts, each differently", () => {
    const reasons: ReplyReason[] = [
      "unanswered-human-comment",
      "unanswered-body",
      "deferred-response",
      "neutral-response",
    ];
    const texts = reasons.map(replyReasonText);
    expect(new Set(texts).size).toBe(reasons.length);
    for (const t of texts) expect(t.length).toBeGreaterThan(10);
  });
});
