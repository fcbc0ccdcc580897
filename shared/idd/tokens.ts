/**
 * Marker fields are whitespace-free tokens. A token may not contain `<!--` or `-->`, which
 * would end (or nest) the HTML comment that carries it.
 */
export function isMarkerToken(value: string): boolean {
  return /^\S+$/.test(value) && !value.includes("-->") && !value.includes("<!--");
}

/** Branch fields additionally exclude `>`, as the IDD reference grammar does (`[^\s>]+`). */
export function isBranchToken(value: string): boolean {
  return isMarkerToken(value) && !value.includes(">");
}

/** Login comparison: GitHub logins are case-insensitive. */
export function sameLogin(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** Code-unit order, the "case-sensitive ASCII compare" the IDD tie-breaks use (not locale order). */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
