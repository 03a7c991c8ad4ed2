import type { QueueRecord } from '../domain/records.js';
import type { Stores } from '../ports/stores.js';
import type { EnqueuedEntriesCache } from '../queue/enqueued-cache.js';
import { queueView } from '../queue/views.js';
import type { QueueSummary } from '../api/schemas/dashboard.js';
import { queueHealth } from './queue-health.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Each queue at a glance: a few queries per queue (its enqueued entries come from the cache at rest), none per PR. */
export async function queueSummaries(stores: Stores, queues: QueueRecord[], now: number, cache?: EnqueuedEntriesCache): Promise<QueueSummary[]> {
  return Promise.all(
    queues.map(async (queue) => {
      const since = new Date(now - DAY_MS);
      const [view, changed] = await Promise.all([queueView(stores, queue, cache), stores.entries.listChangedSince(queue.id, since)]);
      const day = queueHealth(changed, [], { from: since.getTime(), to: now, bucketMs: DAY_MS });
      const prs = view.enqueuedPullRequests;
      return {
        id: queue.id,
        repo: queue.repo,
        targetBranch: queue.targetBranch,
        state: view.state,
        mode: view.mode,
        depth: prs.length,
        testing: prs.filter((pr) => pr.state === 'TESTING').length,
        notReady: prs.filter((pr) => pr.state === 'NOT_READY').length,
        merged24h: day.totals.merged,
        timeInQueueP95Minutes: day.totals.timeInQueueP95,
        problems: view.problems,
      };
    }),
  );
}
