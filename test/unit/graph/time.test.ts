// instantMs reads the common ISO forms by hand: it must answer what Date.parse answers, on those
// forms, around every range edge, and on anything else.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatInstant, instantMs } from "../../../shared/graph/time.ts";

const two = (n: number) => String(n).padStart(2, "0");

/** Instants near the forms read by hand: every field in or just out of range, odd shapes. */
const nearIso = fc
  .record({
    year: fc.oneof(
      fc.integer({ min: 0, max: 9999 }).map((y) => String(y).padStart(4, "0")),
      fc.constantFrom("0099", "0100", "1970", "2026", "+02026", "2o26"),
    ),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 60 }),
    second: fc.integer({ min: 0, max: 60 }),
    fraction: fc.constantFrom("", "", ".000", ".123", ".999", ".5", ".12", ".1234", ".", ".1a3"),
    t: fc.constantFrom("T", "T", "t", " "),
    zone: fc.constantFrom("Z", "Z", "Z", "z", "+01:00", ""),
  })
  .map(
    (p) =>
      `${p.year}-${two(p.month)}-${two(p.day)}${p.t}${two(p.hour)}:${two(p.minute)}:${two(p.second)}${p.fraction}${p.zone}`,
  );

describe("instantMs", () => {
  it("answers what Date.parse answers near the forms it reads by hand", () => {
    fc.assert(
      fc.property(fc.oneof(nearIso, fc.string({ maxLength: 26 })), (iso) => {
        expect(Object.is(instantMs(iso), Date.parse(iso)), iso).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it("reads every instant formatInstant writes back to its milliseconds", () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_000_000_000_000, max: 250_000_000_000_000 }), (ms) => {
        expect(instantMs(formatInstant(ms))).toBe(ms);
        expect(instantMs(new Date(ms).toISOString())).toBe(ms);
      }),
      { numRuns: 5_000 },
    );
  });

  it("on each month's last days, leap years and the edges of the day", () => {
    for (const year of [1900, 2000, 2023, 2024, 2100])
      for (let month = 1; month <= 12; month++)
        for (let day = 26; day <= 32; day++)
          for (const time of ["00:00:00", "23:59:59", "24:00:00", "23:59:59.999"]) {
            const iso = `${year}-${two(month)}-${two(day)}T${time}Z`;
            expect(Object.is(instantMs(iso), Date.parse(iso)), iso).toBe(true);
          }
  });
});
