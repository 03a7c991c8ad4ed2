import { isTerminal } from '../domain/pull-request-state.js';
import type { ImpactedTargetsRecord, QueueEntryRecord } from '../domain/records.js';
import type { Stores } from '../ports/stores.js';
import type { RecordedChange } from '../runner/runner-model.js';

/** The targets each enqueued PR has for the head its entry knows (the latest upload when it knows none), by PR. */
export type TargetsByPr = ReadonlyMap<number, ImpactedTargetsRecord>;

interface CachedQueue {
  recordedThrough: number;
  /** When every entry was last read (following decisions keeps it). */
  readAt: number;
  /** In the order `listEnqueued` gives (priority, submitted at, id); never changed in place (views may hold it). */
  entries: QueueEntryRecord[];
  /** Read when a view first asks (the dashboard's summaries need none); never changed in place either. */
  targets?: TargetsByPr;
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
 * every entry once. Either way a queue is read whole at least once per
 * `maxAgeMs`, for what no decision names.
 */
export class EnqueuedEntriesCache {
  private readonly byQueue = new Map<string, CachedQueue>();
  /** Per queue, the decisions being applied, in the order they were recorded. */
  private readonly following = new Map<string, Promise<void>>();

  private readonly maxQueues: number;
  private readonly maxAgeMs: number;

  /**
   * maxAgeMs: a queue is read whole again at least this often. What no decision names can still change it: an
   * entry inserted by a submit that was never decided (its writer died, its input set aside), an upload stored
   * while its PR's entry could not be found yet. Followed views catch up with those within this time.
   */
  constructor(options: { maxQueues?: number; maxAgeMs?: number } = {}) {
    // Enough for the queues an organization's metrics walk at each scrape without pushing out what views use.
    this.maxQueues = options.maxQueues ?? 64;
    this.maxAgeMs = options.maxAgeMs ?? 60_000;
  }

  /**
   * How many PRs the queue holds: from the cache when it holds the queue as it is, else counted by the store, without
   * filling the cache (a scrape that walks every queue of the service would push out what the views use).
   */
  async count(stores: Stores, queueId: string): Promise<number> {
    await this.following.get(queueId);
    const { recordedThrough } = await stores.engine.cursors(queueId);
    const cached = this.byQueue.get(queueId);
    if (cached && cached.recordedThrough === recordedThrough && Date.now() - cached.readAt < this.maxAgeMs) return cached.entries.length;
    return stores.entries.countEnqueued(queueId);
  }

  async enqueued(stores: Stores, queueId: string): Promise<QueueEntryRecord[]> {
    // A decision recorded here a moment ago is being applied: a few reads by id, cheaper than reading every entry.
    await this.following.get(queueId);
    const { recordedThrough } = await stores.engine.cursors(queueId);
    const cached = this.byQueue.get(queueId);
    if (cached && cached.recordedThrough === recordedThrough && Date.now() - cached.readAt < this.maxAgeMs) return cached.entries;
    const readAt = Date.now();
    const entries = await stores.entries.listEnqueued(queueId);
    // Kept only if nothing was recorded while reading: otherwise the next view reads again.
    if ((await stores.engine.cursors(queueId)).recordedThrough === recordedThrough) this.keep(queueId, { recordedThrough, readAt, entries });
    return entries;
  }

  /**
   * The enqueued entries and their targets, as getQueue shows them. Targets change
   * only by an upload for an enqueued PR, which the writer decides on
   * (`impacted_targets_set`), or with the head an entry knows: so they are kept and
   * followed like the entries (a view at rest reads no target set again).
   */
  async enqueuedWithTargets(stores: Stores, queueId: string): Promise<{ entries: QueueEntryRecord[]; targets: TargetsByPr }> {
    const entries = await this.enqueued(stores, queueId);
    const cached = this.byQueue.get(queueId);
    if (cached?.entries === entries && cached.targets) return { entries, targets: cached.targets };
    const targets = await targetsOf(stores, queueId, entries);
    // Kept with the entries read for, unless a decision was applied meanwhile (it may have changed some).
    if (cached && this.byQueue.get(queueId) === cached && cached.entries === entries) cached.targets = targets;
    return { entries, targets };
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
    const before = new Map(cached.entries.filter((entry) => gone.has(entry.id)).map((entry) => [entry.id, entry]));
    const entries = cached.entries.filter((entry) => !gone.has(entry.id));
    const enqueued = changed.filter((entry): entry is QueueEntryRecord => entry !== null && entry.queueId === change.queueId && !isTerminal(entry.state));
    // As listEnqueued gives them: without their timelines.
    for (const entry of enqueued) entries.splice(placeOf(entries, entry), 0, { ...entry, timeline: [] });
    const targets = cached.targets && (await this.followTargets(stores, change, cached.targets, before, enqueued, entries));
    if (this.byQueue.get(change.queueId) !== cached) return;
    this.keep(change.queueId, { recordedThrough: change.to, readAt: cached.readAt, entries, ...(targets ? { targets } : {}) });
  }

  /** The targets after a decision: read again for PRs whose upload it decided on, new PRs and PRs with a new head. */
  private async followTargets(
    stores: Stores,
    change: RecordedChange,
    kept: TargetsByPr,
    before: ReadonlyMap<string, QueueEntryRecord>,
    changed: readonly QueueEntryRecord[],
    entries: readonly QueueEntryRecord[],
  ): Promise<Map<number, ImpactedTargetsRecord>> {
    const uploaded = new Set(change.targetsOf);
    // By PR: a PR both written and uploaded for is read once.
    const stale = new Map(changed.filter((entry) => before.get(entry.id)?.facts?.headSha !== entry.facts?.headSha || !before.has(entry.id)).map((entry) => [entry.prNumber, entry]));
    // An upload's decision need not write the PR's entry: found in the queue (a pass over it only then).
    if (uploaded.size > 0) for (const entry of entries) if (uploaded.has(entry.prNumber)) stale.set(entry.prNumber, entry);
    const read = await targetsOf(stores, change.queueId, [...stale.values()]);
    const targets = new Map(kept);
    const staying = new Set(changed.map((entry) => entry.id));
    for (const entry of before.values()) if (!staying.has(entry.id)) targets.delete(entry.prNumber); // Left the queue.
    for (const prNumber of stale.keys()) targets.delete(prNumber);
    for (const [prNumber, record] of read) targets.set(prNumber, record);
    return targets;
  }

  private keep(queueId: string, cached: CachedQueue): void {
    this.byQueue.delete(queueId);
    this.byQueue.set(queueId, cached);
    if (this.byQueue.size > this.maxQueues) this.byQueue.delete(this.byQueue.keys().next().value as string);
  }
}

/** The targets of these entries' PRs for the heads they know, as one view of the queue reads them. */
async function targetsOf(stores: Stores, queueId: string, entries: readonly QueueEntryRecord[]): Promise<Map<number, ImpactedTargetsRecord>> {
  if (entries.length === 0) return new Map();
  // A few PRs (a decision's): a read by id each. Many (a whole view): the queue's sets in a bounded number of queries.
  if (entries.length <= 8) {
    const found = await Promise.all(entries.map((e) => stores.impactedTargets.latest(queueId, e.prNumber, e.facts?.headSha)));
    return new Map(found.flatMap((record, i) => (record ? [[(entries[i] as QueueEntryRecord).prNumber, record] as const] : [])));
  }
  return stores.impactedTargets.latestForMany(
    queueId,
    entries.map((e) => ({ prNumber: e.prNumber, ...(e.facts?.headSha ? { sha: e.facts.headSha } : {}) })),
  );
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
