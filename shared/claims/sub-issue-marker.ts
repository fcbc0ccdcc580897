// A sub-issue opened with an idempotency key carries a hidden marker naming the key (hashed),
// so that when GitHub's answer to the create was lost, the retry can find the issue GitHub may
// have opened before opening another. GitHub offers no idempotency of its own for issues.

/** Room the marker takes at the end of a body (with its blank line), in characters. */
export const SUB_ISSUE_MARKER_ROOM = 100;

/** GitHub's limit on an issue body, in characters. */
const GITHUB_BODY_MAX = 65_536;

/** The most a sub-issue body may hold so that body and marker fit GitHub's limit. */
export const SUB_ISSUE_BODY_MAX = GITHUB_BODY_MAX - SUB_ISSUE_MARKER_ROOM;

/** `<!-- switchyard sub-issue key: <32 hex> -->` for a key (per repository and parent issue). */
export async function subIssueMarker(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  const hex = [...new Uint8Array(digest).slice(0, 16)]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  return `<!-- switchyard sub-issue key: ${hex} -->`;
}

/** The body GitHub is sent: the caller's text, then the marker on a line of its own. */
export function bodyWithMarker(body: string | undefined, marker: string): string {
  return body ? `${body}\n\n${marker}` : marker;
}

export function carriesMarker(body: string | null | undefined, marker: string): boolean {
  return typeof body === "string" && body.includes(marker);
}
