import type { QueueEntryRecord } from '../domain/records.js';
import type { Stores } from '../ports/stores.js';

/**
 * The enqueued entries of recently viewed queues, valid while the queue's
 * runner has recorded nothing since: the runner (the only writer of entries)
 * moves the queue's `recordedThrough` cursor after writing each decision's
 * effects, so an unchanged cursor means unchanged entries. A view then costs
 * one read by id instead of reading every entry (which is what grows with the
 * queue). Per process; any replica answers the same, each from its own cache.
 *
 * Facts a background read writes just before its decision records them can
 * show up to that decision later (the uncached read would show them at once).
 */
export class EnqueuedEntriesCache {
  private readonly byQueue = new Map<string, { recordedThrough: number; entries: QueueEntryRecord[] }>();

  constructor(private readonly maxQueues = 16) {}

  async enqueued(stores: Stores, queueId: string): Promise<QueueEntryRecord[]> {
    const { recordedThrough } = await stores.engine.cursors(queueId);
    const cached = this.byQueue.get(queueId);
    if (cached && cached.recordedThrough === recordedThrough) return cached.entries;
    const entries = await stores.entries.listEnqueued(queueId);
    // Kept only if nothing was recorded while reading: otherwise the next view reads again.
    if ((await stores.engine.cursors(queueId)).recordedThrough === recordedThrough) {
      this.byQueue.delete(queueId);
      this.byQueue.set(queueId, { recordedThrough, entries });
      if (this.byQueue.size > this.maxQueues) this.byQueue.delete(this.byQueue.keys().next().value as string);
    }
    return entries;
  }
}
