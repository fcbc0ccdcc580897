// Which address a request comes from, on a host behind reverse proxies. Only the proxies the
// operator names are believed: each appends the address it received the request from to
// `X-Forwarded-For`, so with `trusted` proxies in front, the client is the entry `trusted`
// places from the right of [...forwarded, peer]; anything further left was written by the
// client and proves nothing. With no trusted proxy the peer is the client, whatever it sent.

/** The most proxies that may be trusted (more is a configuration mistake, not a topology). */
export const MAX_TRUSTED_PROXIES = 10;

/** The client's address: the socket's `peer`, or the one `trusted` proxies vouch for. */
export function clientAddress(
  peer: string,
  forwardedFor: string | null | undefined,
  trusted: number,
): string {
  if (trusted <= 0 || !forwardedFor) return peer;
  const chain = forwardedFor
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  chain.push(peer);
  // Fewer entries than trusted hops: the request skipped a proxy, so the leftmost entry is the
  // nearest address anyone vouched for.
  return chain[Math.max(0, chain.length - 1 - trusted)]!;
}

/** `--trusted-proxies` / `SWITCHYARD_TRUSTED_PROXIES`: a whole number from 0 to the bound. */
export function parseTrustedProxies(value: string | undefined): number | string {
  if (value === undefined || value === "") return 0;
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 && n <= MAX_TRUSTED_PROXIES
    ? n
    : `must be a whole number from 0 to ${MAX_TRUSTED_PROXIES}, got ${value}`;
}
