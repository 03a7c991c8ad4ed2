import type { Stores } from '../ports/stores.js';

/** Told when one of the queues it watches changed. */
export type QueueChangeListener = (change: { queueId: string; version: number }) => void;

/**
 * Pushes "this queue changed" to dashboards, across replicas: whichever replica
 * decided, the queue's runner moves its `recordedThrough` cursor after writing
 * a decision's effects, so one read by id per watched queue and interval tells
 * every viewer on this replica at once. The cost follows the number of watched
 * queues, never the number of open pages or the queue's length; pages then read
 * the views they show (served from the enqueued-entries cache while at rest).
 */
export class LiveUpdates {
  /** Per watched queue, each listener and the version it last knew (null: none yet, the next read sets it). */
  private readonly watchers = new Map<string, Map<QueueChangeListener, number | null>>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(
    private readonly stores: Stores,
    private readonly intervalMs = 1_000,
    private readonly log: { warn(details: object, message: string): void } = { warn: () => {} },
  ) {}

  /** The queues' versions now: what a viewer about to read its views starts from (one read per queue). */
  async versions(queueIds: string[]): Promise<Map<string, number>> {
    const read = await Promise.all(queueIds.map(async (queueId) => [queueId, (await this.stores.engine.cursors(queueId)).recordedThrough] as const));
    return new Map(read);
  }

  /**
   * Starts telling `listener` of changes to these queues; the function returned stops it. `since`: the versions
   * the viewer's pages read at (versions(), read before they read their views), so a change between that read and
   * the next poll is told too; without it, the next poll only sets where the viewer starts.
   */
  watch(queueIds: string[], listener: QueueChangeListener, since: ReadonlyMap<string, number> = new Map()): () => void {
    for (const queueId of queueIds) {
      const watcher = this.watchers.get(queueId) ?? new Map<QueueChangeListener, number | null>();
      watcher.set(listener, since.get(queueId) ?? null);
      this.watchers.set(queueId, watcher);
    }
    if (!this.timer) {
      this.timer = setInterval(() => void this.poll(), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      for (const queueId of queueIds) {
        const watcher = this.watchers.get(queueId);
        watcher?.delete(listener);
        if (watcher && watcher.size === 0) this.watchers.delete(queueId);
      }
      if (this.watchers.size === 0) this.stop();
    };
  }

  /** How many queues are watched (tests, diagnostics). */
  get watchedQueues(): number {
    return this.watchers.size;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One read per watched queue; a slow round is never overlapped. */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const [queueId, watcher] of [...this.watchers]) {
        const { recordedThrough } = await this.stores.engine.cursors(queueId);
        for (const [listener, known] of [...watcher]) {
          if (known === recordedThrough || !watcher.has(listener)) continue;
          watcher.set(listener, recordedThrough);
          // A listener that knew no version only learns where it starts.
          if (known !== null) listener({ queueId, version: recordedThrough });
        }
      }
    } catch (error) {
      this.log.warn({ err: error }, 'live updates: reading queue versions failed; tried again next interval');
    } finally {
      this.polling = false;
    }
  }
}
