import type { Config } from "../config/schema.ts";
import { WRITE_ASSOCIATIONS } from "../idd/trust.ts";

/**
 * Whose words may wake an agent (`queue.replyAuthors`). A reply becomes work for an agent that
 * holds write access, so on a public repository a stranger's comment would otherwise be a
 * prompt-injection channel: only people with write access (`write`, the default) or the listed
 * logins count. Independent of `idd.trustedMarkerActors`, which usually names agent accounts.
 */

export interface ReplyAuthor {
  login: string;
  /** GitHub's account type (`User`, `Bot`, ...). */
  type?: string | null;
  /** `author_association` (OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ...), when known. */
  association?: string | null;
}

export interface ReplyTrust {
  replyAuthors: Config["queue"]["replyAuthors"];
  /**
   * A permission check already made with GitHub (`write` only): true/false, or undefined when
   * not made. Unknown is untrusted: a reply that might be a stranger's never becomes work.
   */
  knownWrite?: (login: string) => boolean | undefined;
}

/**
 * Whether GitHub must be asked about this author before their words can count (`write`): a
 * person (an App's bot has no collaborator permission) whose `author_association` does not show
 * write access (NONE, CONTRIBUTOR, missing from a webhook or a GraphQL answer, ...) and who was
 * not asked within the cache's lifetime. Until asked, their words count as a stranger's.
 */
export function needsPermissionCheck(author: ReplyAuthor | null, trust: ReplyTrust): boolean {
  if (author === null || trust.replyAuthors !== "write" || author.type === "Bot") return false;
  const association = author.association?.toUpperCase();
  if (association !== undefined && WRITE_ASSOCIATIONS.has(association)) return false;
  return trust.knownWrite?.(author.login) === undefined;
}

/** May this author's input become a reply? */
export function isTrustedReplyAuthor(author: ReplyAuthor | null, trust: ReplyTrust): boolean {
  if (author === null) return false;
  if (trust.replyAuthors !== "write") {
    const login = author.login.toLowerCase();
    return trust.replyAuthors.some((listed) => listed.toLowerCase() === login);
  }
  const association = author.association?.toUpperCase();
  if (association !== undefined && WRITE_ASSOCIATIONS.has(association)) return true;
  return trust.knownWrite?.(author.login) === true;
}
