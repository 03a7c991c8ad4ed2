import { isTerminal } from '../domain/pull-request-state.js';
import type { QueueEntryRecord } from '../domain/records.js';
import type { Stores } from '../ports/stores.js';
import type { RecordedChange } from '../runner/runner-model.js';


interface CachedQueue {
  recordedThrough: number;
  /** In the order `listEnqueued` gives (priority, submitted at, id); never changed in place (views may hold it). */
  entries: QueueEntryRecord[];
}

/**
 * The enqueued entries of recently viewed queues, valid while the queue's
 * runner has recorded nothing since: the runner (the only writer of entries)
 * moves the queue's `recordedThrough` cursor after writing each decision's
 * effects, so an unchanged cursor means unchanged entries. A view then costs
 * one read by id instead of reading every entry (which is what grows with the
 * queue). Per process; any replica answers the same, each from its own cache.
 *
 * On the replica that is the queue's writer the cache follows each decision
 * (`recorded`): only the entries the decision wrote are read again, mostly from
 * what the runner just wrote, so the first view after a change does not read the
 * whole queue either. Another replica's cache sees the cursor move and reads
 * every entry once.
 */
export class EnqueuedEntriesCache {
  private readonly byQueue = new Map<string, CachedQueue>();
  /** Per queue, the decisions being applied, in the order they were recorded. */
  private readonly following = new Map<string, Promise<void>>();
  /** Decisions applied to a cached queue instead of reading it again (tests and diagnostics). */
  followed = 0;

  constructor(private readonly maxQueues = 16) {}

  async enqueued(stores: Stores, queueId: string): Promise<QueueEntryRecord[]> {
    // A decision recorded here a moment ago is being applied: a few reads by id, cheaper than reading every entry.
    await this.following.get(queueId);
    const { recordedThrough } = await stores.engine.cursors(queueId);
    const cached = this.byQueue.get(queueId);
    if (cached && cached.recordedThrough === recordedThrough) return cached.entries;
    const entries = await stores.entries.listEnqueued(queueId);
    // Kept only if nothing was recorded while reading: otherwise the next view reads again.
    if ((await stores.engine.cursors(queueId)).recordedThrough === recordedThrough) this.keep(queueId, { recordedThrough, entries });
    return entries;
  }

  /**
   * A decision this process's runner recorded: a cached queue at `from` takes the
   * entries it wrote and moves to `to`. A cache at another version is left to the
   * cursor check (it reads every entry on the next view).
   */
  recorded(stores: Stores, change: RecordedChange): Promise<void> {
    const { queueId } = change;
    if (!this.byQueue.has(queueId)) return Promise.resolve();
    const before = this.following.get(queueId) ?? Promise.resolve();
    const applied = before.then(() => this.apply(stores, change)).catch(() => void this.byQueue.delete(queueId)); // Unknown now: read whole next time.
    const done = applied.then(() => {
      if (this.following.get(queueId) === done) this.following.delete(queueId);
    });
    this.following.set(queueId, done);
    return done;
  }

  private async apply(stores: Stores, change: RecordedChange): Promise<void> {
    const cached = this.byQueue.get(change.queueId);
    if (!cached || cached.recordedThrough !== change.from) return;
    const ids = [...new Set(change.entryIds)];
    // As the runner just wrote them (its copy is current while it is the writer), else read by id.
    const changed = await Promise.all(ids.map(async (id) => stores.entries.lastWritten(id) ?? (await stores.entries.findById(id))));
    // A view that read every entry meanwhile replaced the cache: it is at least as new.
    if (this.byQueue.get(change.queueId) !== cached) return;
    const gone = new Set(ids);
    const entries = cached.entries.filter((entry) => !gone.has(entry.id));
    for (const entry of changed) {
      // As listEnqueued gives them: without their timelines.
      if (entry && entry.queueId === change.queueId && !isTerminal(entry.state)) entries.splice(placeOf(entries, entry), 0, { ...entry, timeline: [] });
    }
    this.keep(change.queueId, { recordedThrough: change.to, entries });
    this.followed++;
  }

  private keep(queueId: string, cached: CachedQueue): void {
    this.byQueue.delete(queueId);
    this.byQueue.set(queueId, cached);
    if (this.byQueue.size > this.maxQueues) this.byQueue.delete(this.byQueue.keys().next().value as string);
  }
}

/** listEnqueued's order: priority, then submission time, then id (ObjectId hex: its text order is its order). */
function before(a: QueueEntryRecord, b: QueueEntryRecord): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  const at = a.submittedAt.getTime() - b.submittedAt.getTime();
  if (at !== 0) return at < 0;
  return a.id < b.id;
}

/** Where an entry goes in a sorted list (binary search: a change costs no sort of the queue). */
function placeOf(entries: QueueEntryRecord[], entry: QueueEntryRecord): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (before(entries[middle] as QueueEntryRecord, entry)) low = middle + 1;
    else high = middle;
  }
  return low;
}
