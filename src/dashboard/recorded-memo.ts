import { LRUCache } from 'lru-cache';
import type { Stores } from '../ports/stores.js';

/**
 * A value computed from what a queue's runner recorded (the last day's ended PRs, its merges and time in queue), kept
 * while the runner has recorded nothing since (its `recordedThrough` cursor, one read by id) and at most `maxAgeMs`
 * (a day's window also moves with the clock). The dashboard asks again about once a second while a queue changes;
 * each ask read the day's entries, timelines included, which grows with the queue's history.
 */
export class RecordedMemo<T> {
  private readonly kept = new LRUCache<string, { recordedThrough: number; at: number; value: Promise<T> }>({ max: 200 });

  constructor(
    private readonly maxAgeMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  async get(stores: Pick<Stores, 'engine'>, queueId: string, compute: () => Promise<T>): Promise<T> {
    const { recordedThrough } = await stores.engine.cursors(queueId);
    const kept = this.kept.get(queueId);
    if (kept && kept.recordedThrough === recordedThrough && this.now() - kept.at < this.maxAgeMs) return kept.value;
    const value = compute();
    this.kept.set(queueId, { recordedThrough, at: this.now(), value });
    // A failed read is not kept: the next ask reads again.
    value.catch(() => {
      if (this.kept.get(queueId)?.value === value) this.kept.delete(queueId);
    });
    return value;
  }
}
