// Where the status page's login sends the browser back: a path on this origin, never another
// site. A prefix check is not enough: browsers drop tabs and newlines from a URL and read `\`
// as `/`, so `/<TAB>/evil.example` is `//evil.example` to them. The value is therefore refused
// outright when it holds a control character, and otherwise resolved as a browser would
// (`new URL(value, origin)`), which must land on the same origin.

/** Longer return paths go home: the value rides in a cookie (4 KiB with everything else). */
const MAX_RETURN_LENGTH = 2048;

/** `value` when it is a path on `origin` (kept as given); `/` otherwise. */
export function safeReturnTo(value: string | null | undefined, origin: string): string {
  if (!value || value.length > MAX_RETURN_LENGTH) return "/";
  // Control characters (C0 and DEL) and backslashes: a browser reads them differently.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return "/";
  if (!value.startsWith("/") || value.startsWith("//")) return "/";
  let resolved: URL;
  try {
    resolved = new URL(value, origin);
  } catch {
    return "/";
  }
  return resolved.origin === new URL(origin).origin ? value : "/";
}
