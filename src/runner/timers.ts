/** One wake-up timer per queue: the engine asks for the earliest time it needs. */
export class Timers {
  private readonly byQueue = new Map<string, { at: number; handle: NodeJS.Timeout }>();

  /** Keeps the earlier of the current and the requested wake-up. */
  schedule(queueId: string, at: number, now: number, wake: () => void): void {
    const current = this.byQueue.get(queueId);
    if (current && current.at <= at && current.at > now) return;
    if (current) clearTimeout(current.handle);
    // setTimeout's limit is ~24.8 days; a longer wait re-arms on the next decision.
    const delay = Math.min(Math.max(0, at - now), 2 ** 31 - 1);
    const handle = setTimeout(() => {
      this.byQueue.delete(queueId);
      wake();
    }, delay);
    handle.unref();
    this.byQueue.set(queueId, { at, handle });
  }

  clear(queueId: string): void {
    const current = this.byQueue.get(queueId);
    if (current) clearTimeout(current.handle);
    this.byQueue.delete(queueId);
  }

  clearAll(): void {
    for (const queueId of [...this.byQueue.keys()]) this.clear(queueId);
  }
}
