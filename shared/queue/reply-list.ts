import type { Reply } from "./reply-state.ts";

/**
 * The graph API's `replies` list and the status page's "Waiting for an agent's answer": the
 * issues whose trusted human input waits for an agent (the queue view's replies, after the
 * sweep's exclusions, `done` answers and parked inputs), ascending by number, each with who
 * holds the issue now. A reply being answered is still listed (its claim says so): it leaves
 * the list when the answer is in, not when someone starts on it.
 */

/** Who holds the issue now: a switchyard claim (for its work or its reply) or an IDD marker. */
export interface ReplyClaim {
  agentId: string;
  /** `work` or `reply`: what a switchyard claim was granted for; `idd`: a live IDD marker. */
  kind: "work" | "reply" | "idd";
  /** When the claim expires (an IDD marker: when it goes stale). */
  until: string;
}

export interface ReplyListEntry extends Reply {
  number: number;
  claim: ReplyClaim | null;
}

export function replyList(
  replies: ReadonlyMap<number, Reply>,
  holders: {
    /** Live switchyard claims. */
    claims: Iterable<{ number: number; agentId: string; kind: "work" | "reply"; until: string }>;
    /** Live IDD holders (other agents' markers) by issue. */
    idd: ReadonlyMap<number, { agentId: string; staleAt: string }>;
  },
): ReplyListEntry[] {
  const held = new Map<number, ReplyClaim>();
  for (const [number, h] of holders.idd)
    held.set(number, { agentId: h.agentId, kind: "idd", until: h.staleAt });
  // A switchyard claim says more than a marker (it may be the mirror of that very claim).
  for (const c of holders.claims)
    held.set(c.number, { agentId: c.agentId, kind: c.kind, until: c.until });
  return [...replies]
    .sort((a, b) => a[0] - b[0])
    .map(([number, reply]) => ({
      number,
      reason: reply.reason,
      url: reply.url,
      author: reply.author,
      at: reply.at,
      claim: held.get(number) ?? null,
    }));
}

/** Why an input counts as waiting, in words (the status page). */
export function replyReasonText(reason: Reply["reason"]): string {
  switch (reason) {
    case "unanswered-human-comment":
      return "a person's comment no agent has answered";
    case "unanswered-body":
      return "the issue as opened, not answered by an agent yet";
    case "deferred-response":
      return "the agent's last answer deferred it";
    case "neutral-response":
      return "the agent's last answer neither did it nor deferred it";
  }
}
