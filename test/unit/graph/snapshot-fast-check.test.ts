// The fast snapshot check against the zod schema it stands in for: on every input, either both
// reject, or both accept and give the same snapshot (values, keys present, key order).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { syntheticSnapshot } from "../../../bench/synthetic.ts";
import { parseSnapshot, SnapshotSchema } from "../../../shared/graph/snapshot.ts";
import { fastCheckSnapshot, fastParseSnapshot } from "../../../shared/graph/snapshot-fast-check.ts";
import { ValidationError } from "../../../shared/validation.ts";
import { snapshotArbitrary } from "../../support/graph-arbitraries.ts";

/** A value as nested entry lists: equal exactly when values, key presence and key order are. */
function layout(value: unknown): unknown {
  if (Array.isArray(value)) return ["array", value.map(layout)];
  if (typeof value === "object" && value !== null)
    return ["object", Object.entries(value).map(([k, v]) => [k, layout(v)])];
  return value === undefined ? ["undefined"] : value;
}

function expectAgreement(input: unknown): boolean {
  const fast = fastParseSnapshot(input);
  const zod = SnapshotSchema.safeParse(input);
  expect(fast !== undefined, "fast path and zod disagree on acceptance").toBe(zod.success);
  if (fast !== undefined && zod.success) expect(layout(fast)).toEqual(layout(zod.data));
  // Without the copy: the same verdict, and the input itself, which reads as zod's snapshot on
  // every key of the schema (unknown keys aside).
  const checked = fastCheckSnapshot(input);
  expect(checked !== undefined, "the check without copy disagrees").toBe(fast !== undefined);
  if (checked !== undefined && zod.success) {
    expect(checked).toBe(input);
    expect(input).toMatchObject(zod.data as object);
  }
  return zod.success;
}

/** Instants near the accepted form: each part in or just out of range, odd separators. */
const instantLike = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .record({
        year: fc.oneof(
          fc.constantFrom("2024", "2023", "2026", "1900", "2000", "2100", "1800", "0000", "0400"),
          fc.integer({ min: 0, max: 9999 }).map((y) => String(y).padStart(4, "0")),
          fc.constantFrom("226", "20261", "2o26"),
        ),
        month: fc.integer({ min: 0, max: 13 }),
        day: fc.oneof(fc.integer({ min: 0, max: 32 }), fc.constantFrom(28, 29, 30, 31)),
        hour: fc.integer({ min: 0, max: 24 }),
        minute: fc.integer({ min: 0, max: 60 }),
        second: fc.integer({ min: 0, max: 60 }),
        narrow: fc.boolean(),
        t: fc.constantFrom("T", "T", "T", "t", " "),
        fraction: fc.constantFrom("", "", "", ".5", ".123", ".", ".1234567"),
        zone: fc.constantFrom(
          "Z",
          "Z",
          "Z",
          "z",
          "+01:00",
          "-23:59",
          "+24:00",
          "+01:60",
          "",
          "+0100",
        ),
      })
      .map((p) => {
        const pad = (n: number) => (p.narrow && n < 10 ? String(n) : String(n).padStart(2, "0"));
        return `${p.year}-${pad(p.month)}-${pad(p.day)}${p.t}${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}${p.fraction}${p.zone}`;
      }),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 24 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(null, 0, undefined, new Date(0), ["2026-11-29T12:00:00Z"]),
  },
);
const goodInstant = fc
  .integer({ min: 0, max: 4_000_000_000 })
  .map((s) => new Date(s * 1000).toISOString().replace(".000Z", "Z"));
const instant = fc.oneof(
  { weight: 6, arbitrary: goodInstant },
  { weight: 1, arbitrary: instantLike },
);

/** Mostly valid values of a field, sometimes a wrong one. */
function mostly<T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: invalid });
}

const junk = fc.oneof(
  fc.constantFrom(null, undefined, true, 0, -1, 1.5, Number.NaN, "", "x", [], {}, 2 ** 31),
  fc.string({ maxLength: 4 }),
);
const number = mostly(fc.integer({ min: 1, max: 40 }), junk);
const ref = mostly(
  fc.oneof(
    fc.integer({ min: 1, max: 40 }),
    fc.constantFrom("acme/rocket#3", "other/lib#1", "Other/Lib#1", "far/away#7"),
  ),
  fc.constantFrom("other/lib#0", "#3", "other/lib", "o/r#01", 0, -3, 2 ** 31, 2.5, null, {}),
);
const labelList = mostly(
  fc.array(fc.constantFrom("agent:ready", "bug", "x"), { maxLength: 3 }),
  fc.oneof(fc.constant([""]), fc.constant([1]), fc.constant("bug"), fc.constant(null)),
);

/** An object from optional entries: each key absent, present as undefined, or present. */
function objectOf(
  required: Record<string, fc.Arbitrary<unknown>>,
  optional: Record<string, fc.Arbitrary<unknown>>,
): fc.Arbitrary<unknown> {
  const entries = [
    ...Object.entries(required).map(([key, arb]) =>
      mostly(
        arb.map((v) => [[key, v]]),
        fc.constant([]),
      ),
    ),
    ...Object.entries(optional).map(([key, arb]) =>
      fc.oneof(
        { weight: 3, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: fc.constant([[key, undefined]]) },
        { weight: 6, arbitrary: arb.map((v) => [[key, v]]) },
      ),
    ),
    fc.oneof(
      { weight: 8, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: fc.constant([["extra", 1]]) },
    ),
  ];
  return fc
    .tuple(...(entries as fc.Arbitrary<Array<[string, unknown]>>[]), fc.boolean())
    .map((parts) => {
      const reverse = parts.pop() as boolean;
      const pairs = (parts as Array<Array<[string, unknown]>>).flat();
      // Input key order must not matter: the output follows the schema's order.
      return Object.fromEntries(reverse ? pairs.reverse() : pairs);
    });
}

const labelEvent = objectOf(
  {
    label: mostly(fc.constantFrom("agent:ready", "x"), fc.constantFrom("", 1, null)),
    action: mostly(fc.constantFrom("labeled", "unlabeled"), fc.constantFrom("Labeled", null)),
    createdAt: instant,
  },
  { actor: mostly(fc.constantFrom("octocat", null), fc.constantFrom(1, {})) },
);

const issue = objectOf(
  {
    number,
    title: mostly(fc.string({ maxLength: 6 }), fc.constantFrom(null, 1)),
    state: mostly(fc.constantFrom("open", "closed"), fc.constantFrom("Open", "merged", null)),
    stateReason: mostly(
      fc.constantFrom(null, "completed", "not_planned", "reopened", "duplicate"),
      fc.constantFrom("done", undefined, ""),
    ),
    createdAt: instant,
    updatedAt: instant,
    closedAt: fc.oneof(fc.constant(null), instant),
    labels: labelList,
  },
  {
    parent: fc.oneof(fc.constant(null), ref),
    blockedBy: mostly(fc.array(ref, { maxLength: 3 }), fc.constantFrom(3, "x", null)),
    body: mostly(fc.oneof(fc.string({ maxLength: 8 }), fc.constant(null)), fc.constantFrom(1, {})),
    labelEvents: mostly(fc.array(labelEvent, { maxLength: 2 }), fc.constantFrom(null, {}, "x")),
  },
);

const external = objectOf(
  {
    ref: mostly(
      fc.constantFrom("other/lib#1", "Other/Lib#1", "far/away#7", "acme/rocket#2", "ACME/rocket#9"),
      fc.constantFrom(1, "other/lib", "#1"),
    ),
    state: mostly(fc.constantFrom("open", "closed"), fc.constantFrom("done", null)),
  },
  { closedAt: fc.oneof(fc.constant(null), instant) },
);

const snapshot = objectOf(
  {
    repo: mostly(
      fc.constantFrom("acme/rocket", "a/b", "A-1/x.y_z"),
      fc.constantFrom("acme", "-a/b", "a/b/c", "", 1, null),
    ),
    issues: mostly(fc.array(issue, { maxLength: 6 }), fc.constantFrom(null, {}, "issues")),
  },
  {
    now: instant,
    external: mostly(fc.array(external, { maxLength: 3 }), fc.constantFrom(null, {}, "x")),
  },
);

describe("fast snapshot check agrees with the zod schema", () => {
  it("on random snapshots, valid and invalid, at every level", () => {
    let accepted = 0;
    fc.assert(
      fc.property(mostly(snapshot, junk), (input) => {
        if (expectAgreement(input)) accepted += 1;
      }),
      { numRuns: 3000 },
    );
    // The generator must exercise both answers, not only rejections. About 7% of the 3,000
    // runs are valid (one seen at 188); 100 keeps the check far from the spread of random runs.
    expect(accepted).toBeGreaterThan(100);
  });

  it("on instants near the accepted form (calendar, leap years, offsets)", () => {
    fc.assert(
      fc.property(instantLike, (now) => {
        expectAgreement({ repo: "a/b", now, issues: [] });
      }),
      { numRuns: 5000 },
    );
    for (const now of [
      "2024-02-29T00:00:00Z",
      "2023-02-29T00:00:00Z",
      "2000-02-29T00:00:00Z",
      "1900-02-29T00:00:00Z",
      "0000-02-29T00:00:00Z",
      "2100-02-29T00:00:00Z",
      "1800-02-29T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-12-31T23:59:59Z",
      "2026-12-31T24:00:00Z",
      "2026-00-10T00:00:00Z",
      "2024-02-29T00:00:00.5Z",
      "2023-02-29T00:00:00.123Z",
      "2026-11-29T12:00:00.Z",
      "2026-11-29T12:00:60.1Z",
      "2026-11-29T12:00:00.12a4Z",
      "2026-11-29T12:00:00.1234567Z",
    ]) {
      expectAgreement({ repo: "a/b", now, issues: [] });
    }
    // Every leap-year rule (each century's 00 year, each year of one century) and every day
    // number of every month, exhaustively.
    const two = (n: number) => String(n).padStart(2, "0");
    for (let k = 0; k < 100; k++) {
      expectAgreement({ repo: "a/b", now: `${two(k)}00-02-29T00:00:00Z`, issues: [] });
      expectAgreement({ repo: "a/b", now: `20${two(k)}-02-29T00:00:00Z`, issues: [] });
    }
    for (let month = 0; month <= 13; month++)
      for (let day = 0; day <= 32; day++)
        expectAgreement({
          repo: "a/b",
          now: `2026-${two(month)}-${two(day)}T00:00:00Z`,
          issues: [],
        });
  });

  it("on the graph tests' random snapshots, which it accepts", () => {
    fc.assert(
      fc.property(snapshotArbitrary(), (input) => {
        expect(fastParseSnapshot(input)).toBeDefined();
        expectAgreement(input);
      }),
      { numRuns: 300 },
    );
  });

  it("on duplicates, which only the refinement catches", () => {
    const one = {
      number: 1,
      title: "t",
      state: "open",
      stateReason: null,
      createdAt: "2026-11-01T00:00:00Z",
      updatedAt: "2026-11-01T00:00:00Z",
      closedAt: null,
      labels: [],
    };
    expect(expectAgreement({ repo: "a/b", issues: [one, one] })).toBe(false);
    expect(expectAgreement({ repo: "a/b", issues: [one, { ...one, number: 9_000_000 }] })).toBe(
      true,
    );
    expect(
      expectAgreement({ repo: "a/b", issues: [one, { ...one, number: 9_000_000 }, one] }),
    ).toBe(false);
    const ext = (ref: string) => ({ ref, state: "closed" });
    expect(
      expectAgreement({ repo: "a/b", issues: [], external: [ext("x/y#1"), ext("X/y#1")] }),
    ).toBe(false);
    expect(
      expectAgreement({ repo: "a/b", issues: [one], external: [ext("a/b#2"), ext("A/B#2")] }),
    ).toBe(false);
  });

  it("on a synthetic 2,000-issue repository (the benchmarks' shape), which it accepts", () => {
    const input = syntheticSnapshot(2_000);
    expect(fastParseSnapshot(input)).toBeDefined();
    expectAgreement(input);
  });

  it("leaves errors to zod: parseSnapshot still names the first bad path", () => {
    const bad = { repo: "a/b", issues: [{ number: 1, title: 2 }] };
    expect(fastCheckSnapshot(bad)).toBeUndefined();
    try {
      parseSnapshot(bad);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).path).toBe("issues[0].title");
    }
  });

  it("without the copy, gives back the input it vouches for", () => {
    const input = syntheticSnapshot(50);
    expect(fastCheckSnapshot(input)).toBe(input);
    expect(fastCheckSnapshot(input)).toEqual(parseSnapshot(input));
  });

  it("never shares mutable parts with its input", () => {
    const input = syntheticSnapshot(50);
    const parsed = parseSnapshot(input);
    expect(parsed).not.toBe(input);
    expect(parsed.issues).not.toBe(input.issues);
    parsed.issues.forEach((issue, i) => {
      expect(issue).not.toBe(input.issues[i]);
      expect(issue.labels).not.toBe(input.issues[i]!.labels);
    });
  });
});
