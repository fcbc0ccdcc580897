// Destructive changes a webhook announces are applied only after GitHub confirms them (spec 6.1):
// GitHub signs a delivery's body but not its event name or id, so a replayed or relabelled
// delivery must not delete anything that still exists. The confirming request is a GET with the
// App's credentials that does not follow redirects; this is how its status reads.

/** `here`: still there, nothing changes; `transferred` (301) and `gone` (404, 410) confirm. */
export type RemovalVerdict = "here" | "transferred" | "gone";

/** The verdict of a confirming GET's status; anything else is not an answer (throw, retry). */
export function removalVerdict(status: number): RemovalVerdict {
  if (status === 301 || status === 308) return "transferred";
  if (status === 404 || status === 410) return "gone";
  if (status >= 200 && status < 300) return "here";
  throw new Error(`HTTP ${status} neither confirms nor denies a removal`);
}
