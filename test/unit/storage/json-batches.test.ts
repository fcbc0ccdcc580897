// Rows cut into JSON arrays for one statement each (functions/objects/json-batches.ts): nothing
// lost or reordered, no chunk past its byte limit (the bound never undercounts), and keys
// grouped back to every key asked.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  JSON_BYTES_PER_STATEMENT,
  jsonBytesAtMost,
  KEYS_PER_STATEMENT,
  keyChunks,
  rowsByKey,
  tupleChunks,
} from "../../../functions/objects/json-batches.ts";

const utf8 = (s: string) => new TextEncoder().encode(s).length;

// Strings with what JSON escapes (quotes, backslashes, control characters), astral and BMP text.
const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom('"', "\\", "\n", "\u0000", "\u001f", "é", "☃", "🚀", "a"),
    fc.string({ unit: "binary", maxLength: 1 }),
  ),
  maxLength: 40,
});
const value = fc.oneof(
  text,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const tuple = fc.array(value, { maxLength: 6 });

describe("json batches", () => {
  it("never undercounts a tuple's UTF-8 JSON (property)", () => {
    fc.assert(
      fc.property(tuple, (t) => {
        expect(jsonBytesAtMost(t)).toBeGreaterThanOrEqual(utf8(JSON.stringify(t)));
      }),
      { numRuns: 2000 },
    );
  });

  it("cuts tuples into chunks that concatenate to them, each within the limit (property)", () => {
    fc.assert(
      fc.property(
        fc.array(tuple, { maxLength: 60 }),
        fc.integer({ min: 1, max: 400 }),
        (ts, max) => {
          const chunks = tupleChunks(ts, max);
          const parsed = chunks.map((c) => JSON.parse(c) as unknown[][]);
          expect(parsed.flat()).toEqual(JSON.parse(JSON.stringify(ts)));
          for (const [i, chunk] of parsed.entries()) {
            expect(chunk.length).toBeGreaterThan(0);
            // Over the limit only as a tuple alone.
            if (chunk.length > 1) expect(utf8(chunks[i]!)).toBeLessThanOrEqual(max);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("keeps a page of the longest bodies under the 2 MB a bound string may have", () => {
    const body = "\u0001".repeat(65_536); // escaped as \u0001: six bytes each
    const chunks = tupleChunks(Array.from({ length: 40 }, (_, i) => [i, body, null]));
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(utf8(c)).toBeLessThanOrEqual(JSON_BYTES_PER_STATEMENT);
    expect(chunks.flatMap((c) => JSON.parse(c) as unknown[]).length).toBe(40);
  });

  it("cuts keys by count and groups rows back to every key asked", () => {
    const keys = Array.from({ length: 2 * KEYS_PER_STATEMENT + 1 }, (_, i) => i);
    expect(keyChunks(keys).map((c) => (JSON.parse(c) as number[]).length)).toEqual([
      KEYS_PER_STATEMENT,
      KEYS_PER_STATEMENT,
      1,
    ]);
    const reads: number[][] = [];
    const grouped = rowsByKey(
      keys,
      (json) => {
        const asked = JSON.parse(json) as number[];
        reads.push(asked);
        // Rows for the even keys only, two each.
        return asked
          .filter((k) => k % 2 === 0)
          .flatMap((k) => [
            { k, n: 1 },
            { k, n: 2 },
          ]);
      },
      (r) => r.k,
      (r) => r.n,
    );
    expect(reads).toHaveLength(3);
    expect(grouped.size).toBe(keys.length);
    expect(grouped.get(4)).toEqual([1, 2]);
    expect(grouped.get(5)).toEqual([]);
  });
});
