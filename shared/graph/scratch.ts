/**
 * Typed arrays lent for the length of one computation (an analysis pass, a component search) and
 * taken back when it ends, so the next one reuses their memory.
 *
 * Why: a typed array's memory lives outside the JavaScript heap and is freed only when a
 * collection finds its wrapper dead; until then (V8 lets tens of megabytes of such memory
 * pile up before it collects) every analysis of a 100,000-issue graph would add megabytes that
 * workerd's allocator keeps as resident memory after they are freed. Lending the same buffers
 * again keeps that memory flat.
 *
 * Results are unchanged by lending: every array handed out reads as zeros (or the fill asked
 * for), exactly like a new one. Only buffers this pool lent are taken back, each once, so a
 * second release of the same array, or of an array it never lent, does nothing.
 */
export class ScratchArrays {
  /** Buffers ready to lend, by byte length (a power of two). */
  private readonly free = new Map<number, ArrayBuffer[]>();
  private freeBytes = 0;
  /** Buffers out on loan: a buffer a borrower drops without returning is collected as usual. */
  private readonly lent = new WeakSet<ArrayBuffer>();
  /** At most this many bytes are kept for lending again; the rest is left to the collector. */
  readonly maxFreeBytes: number;
  /** Below this many bytes an array is made new (not worth keeping). */
  readonly minBytes: number;

  constructor(options: { maxFreeBytes?: number; minBytes?: number } = {}) {
    this.maxFreeBytes = options.maxFreeBytes ?? 32 * 2 ** 20;
    this.minBytes = options.minBytes ?? 4_096;
  }

  /** A zeroed `Int32Array` of `length` (or filled with `fill`). */
  int32(length: number, fill = 0): Int32Array {
    const buffer = this.buffer(length * 4);
    const array = buffer === null ? new Int32Array(length) : new Int32Array(buffer, 0, length);
    if (fill !== 0 || buffer !== null) array.fill(fill);
    return array;
  }

  /** A zeroed `Uint8Array` of `length`. */
  uint8(length: number): Uint8Array {
    const buffer = this.buffer(length);
    const array = buffer === null ? new Uint8Array(length) : new Uint8Array(buffer, 0, length);
    if (buffer !== null) array.fill(0);
    return array;
  }

  /** A zeroed `Float64Array` of `length`. */
  float64(length: number): Float64Array {
    const buffer = this.buffer(length * 8);
    const array = buffer === null ? new Float64Array(length) : new Float64Array(buffer, 0, length);
    if (buffer !== null) array.fill(0);
    return array;
  }

  /** Takes back arrays this pool lent; the caller must not use them afterwards. */
  release(...arrays: ReadonlyArray<ArrayBufferView | null | undefined>): void {
    for (const array of arrays) {
      const buffer = array?.buffer;
      if (!(buffer instanceof ArrayBuffer) || !this.lent.has(buffer)) continue;
      this.lent.delete(buffer);
      if (this.freeBytes + buffer.byteLength > this.maxFreeBytes) continue;
      const list = this.free.get(buffer.byteLength);
      if (list) list.push(buffer);
      else this.free.set(buffer.byteLength, [buffer]);
      this.freeBytes += buffer.byteLength;
    }
  }

  /** Bytes kept for lending again. */
  get keptBytes(): number {
    return this.freeBytes;
  }

  /** A buffer of at least `bytes` on loan (a kept one first), or null when too small to lend. */
  private buffer(bytes: number): ArrayBuffer | null {
    if (bytes < this.minBytes) return null;
    let size = this.minBytes;
    while (size < bytes) size *= 2;
    const kept = this.free.get(size)?.pop();
    if (kept !== undefined) this.freeBytes -= size;
    const buffer = kept ?? new ArrayBuffer(size);
    this.lent.add(buffer);
    return buffer;
  }
}

/** The pool the graph analyses borrow from (one per isolate: the objects in it take turns). */
export const scratch = new ScratchArrays();
