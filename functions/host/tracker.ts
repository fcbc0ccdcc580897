/** Work in flight (requests, alarm runs, waitUntil promises): what a graceful shutdown waits for. */
export class Tracker {
  private readonly pending = new Set<Promise<unknown>>();

  track<T>(promise: Promise<T>): Promise<T> {
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
    return promise;
  }

  get size(): number {
    return this.pending.size;
  }

  /** Resolves once nothing tracked is pending, including work started while waiting. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
