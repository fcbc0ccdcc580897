// SHA-256 of keys and tokens, synchronous: every fleet request hashes its key to look it up,
// and WebCrypto's `digest` runs as an asynchronous job on Node whose overhead per call was 13%
// of a claim's CPU in the claims benchmark (issue 21) for a hash of a few dozen bytes. A
// maintained, audited pure-JavaScript implementation (@noble/hashes) does it at once on every
// host; the unit test holds it equal to WebCrypto's digest.
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";

export { sha256 };

/** Lower-case hex SHA-256 of a string's UTF-8 bytes, computed at once. */
export function sha256HexSync(text: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(text)));
}

/** Lower-case hex SHA-256 of a string's UTF-8 bytes (asynchronous for its callers' sake). */
export async function sha256Hex(text: string): Promise<string> {
  return sha256HexSync(text);
}
