/**
 * Many rows in one SQL statement: a JSON array bound as a single parameter and read back with
 * `json_each`. Under workerd every `sql.exec` call leaves native memory that only a major garbage
 * collection frees (about 1.8 KB each, measured in bench/README.md), so a write path that runs a
 * statement per row grows the isolate's resident memory with the row count; one statement per
 * chunk of rows keeps it flat.
 */

/** Keys named in one read (the JSON array of keys is one bound parameter). */
export const KEYS_PER_STATEMENT = 500;

/**
 * Bytes of JSON bound in one write at most, by a bound that never undercounts (see
 * `jsonBytesAtMost`): Durable Object SQLite takes strings up to 2 MB, and an issue body runs to
 * 65,536 characters.
 */
export const JSON_BYTES_PER_STATEMENT = 1024 * 1024;

/**
 * At least as many UTF-8 bytes as `JSON.stringify(tuple)` has, without making it: a character
 * of a string takes at most six (an escape such as `\u001f`), a number, boolean or null at most
 * 24. Stringifying every row to measure it would copy a page of bodies once more.
 */
export function jsonBytesAtMost(tuple: readonly unknown[]): number {
  let n = 2;
  for (const v of tuple) n += typeof v === "string" ? 6 * v.length + 3 : 25;
  return n;
}

/**
 * `tuples` (arrays of strings, numbers, booleans and nulls) as JSON arrays of at most `maxBytes`
 * by `jsonBytesAtMost` each, in order; a tuple over the limit goes alone.
 */
export function tupleChunks(
  tuples: ReadonlyArray<readonly unknown[]>,
  maxBytes: number = JSON_BYTES_PER_STATEMENT,
): string[] {
  const out: string[] = [];
  let start = 0;
  let size = 2;
  for (let i = 0; i < tuples.length; i++) {
    const bytes = jsonBytesAtMost(tuples[i]!) + 1; // and its comma
    if (i > start && size + bytes > maxBytes) {
      out.push(JSON.stringify(tuples.slice(start, i)));
      start = i;
      size = 2;
    }
    size += bytes;
  }
  if (start < tuples.length) out.push(JSON.stringify(start === 0 ? tuples : tuples.slice(start)));
  return out;
}

/** `keys` (numbers or strings) cut into JSON arrays of at most `KEYS_PER_STATEMENT`. */
export function keyChunks(keys: readonly unknown[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_STATEMENT)
    out.push(JSON.stringify(keys.slice(i, i + KEYS_PER_STATEMENT)));
  return out;
}

/**
 * Rows grouped by key for every key in `keys` (a key with no row maps to an empty array), read
 * by `read` a chunk of keys at a time.
 */
export function rowsByKey<K, Row, Out>(
  keys: readonly K[],
  read: (keysJson: string) => Row[],
  keyOf: (row: Row) => K,
  map: (row: Row) => Out,
): Map<K, Out[]> {
  const out = new Map<K, Out[]>();
  for (const k of keys) out.set(k, []);
  for (const json of keyChunks(keys)) {
    for (const row of read(json)) out.get(keyOf(row))?.push(map(row));
  }
  return out;
}
