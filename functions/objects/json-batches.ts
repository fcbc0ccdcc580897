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
 * JSON bound in one write, in UTF-16 code units (three bytes of UTF-8 at most each): Durable
 * Object SQLite takes strings up to 2 MB, and an issue body runs to 65,536 characters.
 */
export const JSON_UNITS_PER_STATEMENT = 512 * 1024;

/** `keys` cut into arrays of at most `KEYS_PER_STATEMENT`, each as JSON. */
export function keyChunks(keys: readonly unknown[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_STATEMENT)
    out.push(JSON.stringify(keys.slice(i, i + KEYS_PER_STATEMENT)));
  return out;
}

/**
 * `tuples` as JSON arrays of at most `maxUnits` code units each, in order (a tuple longer than
 * that goes alone).
 */
export function tupleChunks(
  tuples: readonly unknown[],
  maxUnits: number = JSON_UNITS_PER_STATEMENT,
): string[] {
  const out: string[] = [];
  let parts: string[] = [];
  let size = 2;
  for (const tuple of tuples) {
    const text = JSON.stringify(tuple);
    if (parts.length > 0 && size + text.length + 1 > maxUnits) {
      out.push(`[${parts.join(",")}]`);
      parts = [];
      size = 2;
    }
    parts.push(text);
    size += text.length + 1;
  }
  if (parts.length > 0) out.push(`[${parts.join(",")}]`);
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
