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
  private readonly watchers = new Map<string, { version: number | null; listeners: Set<QueueChangeListener> }>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(
    private readonly stores: Stores,
    private readonly intervalMs = 1_000,
    private readonly log: { warn(details: object, message: string): void } = { warn: () => {} },
  ) {}

  /** Starts telling `listener` of changes to these queues; the function returned stops it. */
  watch(queueIds: string[], listener: QueueChangeListener): () => void {
    for (const queueId of queueIds) {
      const watcher = this.watchers.get(queueId) ?? { version: null, listeners: new Set<QueueChangeListener>() };
      watcher.listeners.add(listener);
      this.watchers.set(queueId, watcher);
    }
    if (!this.timer) {
      this.timer = setInterval(() => void this.poll(), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      for (const queueId of queueIds) {
        const watcher = this.watchers.get(queueId);
        watcher?.listeners.delete(listener);
        if (watcher && watcher.listeners.size === 0) this.watchers.delete(queueId);
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
        const before = watcher.version;
        watcher.version = recordedThrough;
        // The first read only sets where the viewer started.
        if (before === null || before === recordedThrough) continue;
        for (const listener of [...watcher.listeners]) listener({ queueId, version: recordedThrough });
      }
    } catch (error) {
      this.log.warn({ err: error }, 'live updates: reading queue versions failed; tried again next interval');
    } finally {
      this.polling = false;
    }
  }
}
