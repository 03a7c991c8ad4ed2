import type { QueueRecord } from '../domain/records.js';
import type { Stores } from '../ports/stores.js';
import type { EnqueuedEntriesCache } from '../queue/enqueued-cache.js';
import { shownQueueState } from '../domain/queue-state.js';
import { problemsOf } from '../queue/views.js';
import type { QueueSummary } from '../api/schemas/dashboard.js';
import { queueHealth } from './queue-health.js';
import type { RecordedMemo } from '../concurrency/recorded-memo.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A queue's last day, as its summary shows it. */
export interface DaySummary {
  merged: number;
  timeInQueueP95: number | null;
}

/**
 * Each queue at a glance: three reads per queue, none per PR; at rest (`cache`, `days`: nothing recorded since the
 * last ask) only cursor reads by id.
 */
export async function queueSummaries(stores: Stores, queues: QueueRecord[], now: number, cache?: EnqueuedEntriesCache, days?: RecordedMemo<DaySummary>): Promise<QueueSummary[]> {
  return Promise.all(
    queues.map(async (queue) => {
      const since = new Date(now - DAY_MS);
      const lastDay = async (): Promise<DaySummary> => {
        const { totals } = queueHealth(await stores.entries.listChangedSince(queue.id, since), [], { from: since.getTime(), to: now, bucketMs: DAY_MS });
        return { merged: totals.merged, timeInQueueP95: totals.timeInQueueP95 };
      };
      const [entries, lastRun, day] = await Promise.all([
        cache ? cache.enqueued(stores, queue.id) : stores.entries.listEnqueued(queue.id),
        stores.testRuns.latestFinished(queue.id),
        days ? days.get(stores.engine, queue.id, lastDay) : lastDay(),
      ]);
      return {
        id: queue.id,
        repo: queue.repo,
        targetBranch: queue.targetBranch,
        state: shownQueueState(queue.requestedState, queue.modeSwitchStartedAt),
        mode: queue.config.mode,
        depth: entries.length,
        testing: entries.filter((e) => e.state === 'TESTING').length,
        notReady: entries.filter((e) => e.state === 'NOT_READY').length,
        merged24h: day.merged,
        timeInQueueP95Minutes: day.timeInQueueP95,
        problems: problemsOf(queue, lastRun),
      };
    }),
  );
}
