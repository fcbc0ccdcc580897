import { describe, expect, it } from "vitest";
import { fnv1a32, rotateForMachine } from "../../../shared/graph/hash.ts";

describe("FNV-1a 32", () => {
  // Reference vectors from the FNV authors' test suite.
  it.each([
    ["", 0x811c9dc5],
    ["a", 0xe40c292c],
    ["foobar", 0xbf9cf968],
  ])("fnv1a32(%j) = %i", (text, expected) => {
    expect(fnv1a32(text)).toBe(expected);
  });

  it("hashes UTF-8 bytes, not UTF-16 code units", () => {
    // "é" is one UTF-16 unit but two UTF-8 bytes (0xc3 0xa9).
    let h = 0x811c9dc5;
    for (const b of [0xc3, 0xa9]) h = Math.imul(h ^ b, 0x01000193) >>> 0;
    expect(fnv1a32("é")).toBe(h);
  });
});

describe("rotateForMachine", () => {
  it("leaves the list alone without a machine or when empty", () => {
    expect(rotateForMachine([1, 2, 3], undefined)).toEqual([1, 2, 3]);
    expect(rotateForMachine([], "m")).toEqual([]);
  });

  it("starts at fnv1a32(machine) mod n and keeps every item once", () => {
    const list = [10, 20, 30, 40, 50, 60, 70];
    for (const machine of ["a", "b", "runner-1", "runner-2"]) {
      const rotated = rotateForMachine(list, machine);
      expect(rotated[0]).toBe(list[fnv1a32(machine) % list.length]);
      expect([...rotated].sort((x, y) => x - y)).toEqual(list);
    }
  });
});
