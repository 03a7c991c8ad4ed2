import type { QueueRecord } from '../domain/records.js';
import type { Stores } from '../ports/stores.js';
import type { EnqueuedEntriesCache } from '../queue/enqueued-cache.js';
import { shownQueueState } from '../domain/queue-state.js';
import { problemsOf } from '../queue/views.js';
import type { QueueSummary } from '../api/schemas/dashboard.js';
import { queueHealth } from './queue-health.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Each queue at a glance: three reads per queue (its enqueued entries from the cache at rest), none per PR. */
export async function queueSummaries(stores: Stores, queues: QueueRecord[], now: number, cache?: EnqueuedEntriesCache): Promise<QueueSummary[]> {
  return Promise.all(
    queues.map(async (queue) => {
      const since = new Date(now - DAY_MS);
      const [entries, lastRun, changed] = await Promise.all([
        cache ? cache.enqueued(stores, queue.id) : stores.entries.listEnqueued(queue.id),
        stores.testRuns.latestFinished(queue.id),
        stores.entries.listChangedSince(queue.id, since),
      ]);
      const day = queueHealth(changed, [], { from: since.getTime(), to: now, bucketMs: DAY_MS });
      return {
        id: queue.id,
        repo: queue.repo,
        targetBranch: queue.targetBranch,
        state: shownQueueState(queue.requestedState, queue.modeSwitchStartedAt),
        mode: queue.config.mode,
        depth: entries.length,
        testing: entries.filter((e) => e.state === 'TESTING').length,
        notReady: entries.filter((e) => e.state === 'NOT_READY').length,
        merged24h: day.totals.merged,
        timeInQueueP95Minutes: day.totals.timeInQueueP95,
        problems: problemsOf(queue, lastRun),
      };
    }),
  );
}
