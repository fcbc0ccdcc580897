import type { RestComment } from "../github/comments.ts";
import type { GraphEvent } from "./events.ts";

/**
 * `comment` events for an issue's comments as read from GitHub, with `author_association`. The
 * merge rule keeps only those that open with a claim marker, and orders by `updated_at`, so a
 * comment already known from its webhook changes nothing.
 */
export function commentEvents(number: number, comments: readonly RestComment[]): GraphEvent[] {
  return comments.map((c) => ({
    type: "comment" as const,
    id: c.id,
    number,
    author: { login: c.user?.login ?? "ghost", type: c.user?.type ?? "User" },
    association: c.author_association ?? null,
    body: c.body ?? "",
    createdAt: c.created_at,
    updatedAt: c.updated_at,
    ...(c.html_url !== undefined ? { url: c.html_url } : {}),
  }));
}
