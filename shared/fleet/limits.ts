// How large a fleet API request body may be. The largest legitimate one is a comment or a
// sub-issue of 65,536 characters (GitHub's limit): at most 6 bytes each once JSON-escaped
// (`\u0000`), about 384 KiB, plus the other fields. Larger bodies are refused (413) before they
// are read further, on Cloudflare and on `switchyard serve` alike.
export const FLEET_BODY_MAX_BYTES = 512 * 1024;
