const encoder = new TextEncoder();

/** FNV-1a, 32 bit (offset basis 0x811c9dc5, prime 0x01000193) over the UTF-8 bytes of `text`. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of encoder.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * Rotates a sorted list by `fnv1a32(machine) mod n`, so machines sharing one queue start at
 * different places and rarely race for the same head item.
 */
export function rotateForMachine<T>(sorted: readonly T[], machine: string | undefined): T[] {
  if (machine === undefined || sorted.length === 0) return [...sorted];
  const offset = fnv1a32(machine) % sorted.length;
  return [...sorted.slice(offset), ...sorted.slice(0, offset)];
}
