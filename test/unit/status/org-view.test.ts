// The owner's page view-model: figures from the pushed heads (expired claims not counted, a
// repository without an active head shows "not known"), and the next five items over the
// visible repositories only, in the org queue's fair order, whatever capabilities they need.
import { describe, expect, it } from "vitest";
import { type HeadItem, itemKind, type RepoHead } from "../../../shared/org/head.ts";
import { ORG_NEXT_SHOWN, orgPageModel } from "../../../shared/status/org-view.ts";

const NOW = Date.parse("2026-12-02T12:00:00Z");

function item(number: number, requires: string[] = []): HeadItem {
  const base = { section: 3 as const, reason: "ready label" };
  return {
    number,
    title: `task ${number}`,
    kind: itemKind(base),
    ...base,
    requires,
    impact: 0,
    priority: null,
    attempts: 0,
    url: `https://github.test/x/issues/${number}`,
  };
}

function head(repoId: number, fullName: string, items: HeadItem[], extra: Partial<RepoHead> = {}) {
  return {
    repoId,
    fullName,
    installationId: 1,
    version: 1,
    status: "active" as const,
    items,
    total: items.length,
    claims: [],
    ...extra,
  };
}

const claim = (number: number, expiresAt: string) => ({
  claimId: `c${number}`,
  number,
  agentId: "a",
  machine: null,
  fence: number,
  branch: `agent/${number}`,
  grantedAt: "2026-12-02T11:00:00Z",
  expiresAt,
});

describe("orgPageModel", () => {
  it("counts the live claims only, and says 'not known' without an active head", () => {
    const m = orgPageModel({
      owner: "acme",
      viewer: "alice",
      nowMs: NOW,
      repos: [
        {
          fullName: "acme/b",
          private: true,
          stuck: 2,
          head: head(2, "acme/b", [item(1)], {
            total: 30,
            claims: [claim(4, "2026-12-02T12:30:00Z"), claim(5, "2026-12-02T11:59:59Z")],
          }),
        },
        { fullName: "acme/a", private: false, stuck: null, head: null },
        {
          fullName: "acme/c",
          private: false,
          stuck: 0,
          head: head(3, "acme/c", [item(9)], { status: "suspended" }),
        },
      ],
    });
    expect(m.repos).toEqual([
      {
        fullName: "acme/a",
        href: "/repos/acme/a",
        private: false,
        queueLength: null,
        liveClaims: null,
        stuck: null,
      },
      {
        fullName: "acme/b",
        href: "/repos/acme/b",
        private: true,
        queueLength: 30,
        liveClaims: 1,
        stuck: 2,
      },
      {
        fullName: "acme/c",
        href: "/repos/acme/c",
        private: false,
        queueLength: null,
        liveClaims: null,
        stuck: 0,
      },
    ]);
    // A suspended repository's items are not next.
    expect(m.next.map((n) => `${n.repo}#${n.number}`)).toEqual(["acme/b#1"]);
    expect(m.queueTotal).toBe(30);
  });

  it("lists the next five in fair order across repositories, whatever they require", () => {
    const m = orgPageModel({
      owner: "acme",
      viewer: null,
      nowMs: NOW,
      repos: [
        {
          fullName: "acme/one",
          private: null,
          stuck: 0,
          head: head(1, "acme/one", [item(1), item(2, ["GPU"]), item(3), item(4)]),
        },
        {
          fullName: "acme/two",
          private: null,
          stuck: 0,
          head: head(2, "acme/two", [item(7, ["rust"]), item(8)]),
        },
      ],
    });
    expect(m.next).toHaveLength(ORG_NEXT_SHOWN);
    expect(m.next.map((n) => `${n.repo}#${n.number}`)).toEqual([
      "acme/one#1",
      "acme/two#7",
      "acme/one#2",
      "acme/two#8",
      "acme/one#3",
    ]);
    expect(m.queueTotal).toBe(6);
  });
});
