import { LRUCache } from 'lru-cache';
import type { EngineStore } from '../ports/engine-store.js';

/**
 * A value computed from what a queue's runner recorded (the dashboard's last day of ended PRs, a queue's state loaded
 * on a replica that does not write it), kept while the runner has recorded nothing since (its `recordedThrough`
 * cursor, one read by id) and at most `maxAgeMs` (a day's window also moves with the clock). Asks that come while it
 * is computed share it. The dashboard asks about once a second while a queue changes; status reads come together
 * after each decision: each ask computing again grew with the queue or its history.
 */
export class RecordedMemo<T> {
  private readonly kept = new LRUCache<string, { recordedThrough: number; at: number; value: Promise<T> }>({ max: 200 });

  constructor(
    private readonly maxAgeMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  async get(engine: Pick<EngineStore, 'cursors'>, queueId: string, compute: () => Promise<T>): Promise<T> {
    const { recordedThrough } = await engine.cursors(queueId);
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
