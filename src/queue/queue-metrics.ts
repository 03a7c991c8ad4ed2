import { Gauge, Histogram, Registry } from 'prom-client';
import type { QueueEntryRecord, QueueRecord, TestRunRecord } from '../domain/records.js';
import type { Stores } from '../ports/stores.js';

/** The exact content type of the text exposition format, version 0.0.4. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

export const DURATION_BUCKETS = [60, 300, 600, 900, 1800, 3600, 5400, 7200];
const HOUR_MS = 60 * 60 * 1000;
const LABELS = ['repo', 'branch'] as const;

/**
 * Queue metrics for `getMergeQueueMetrics`, computed from stored facts on each
 * scrape: any replica answers the same, and nothing is lost on restart. The
 * `_1h` series cover the hour before `now`; as windowed values they can fall,
 * so they are exposed as gauges (their names are the API's).
 */
export async function renderQueueMetrics(
  stores: Stores,
  queues: QueueRecord[],
  now: Date,
  /** A queue's enqueued entries (the API's cache: a scrape every 15 s read every entry of every queue). */
  enqueuedOf: (queueId: string) => Promise<QueueEntryRecord[]> = (queueId) => stores.entries.listEnqueued(queueId),
): Promise<string> {
  const registry = new Registry();
  const gauge = (name: string, help: string, extra: string[] = []) =>
    new Gauge({ name, help, labelNames: [...LABELS, ...extra], registers: [registry] });
  const histogram = (name: string, help: string) =>
    new Histogram({ name, help, labelNames: [...LABELS], buckets: DURATION_BUCKETS, registers: [registry] });

  const depth = gauge('mq_depth_current', 'Pull requests currently enqueued (not merged, failed or cancelled).');
  const awaiting = gauge('mq_awaiting_mergeability', 'Enqueued pull requests waiting for the host to report them mergeable.');
  const slots = gauge('mq_testing_slots_active', 'Test runs in progress.');
  const conclusions = gauge('mq_pr_conclusions_1h_total', 'Pull requests concluded in the last hour, by conclusion.', ['conclusion']);
  const restarts = gauge('mq_pr_restarts_1h_total', 'Test restarts requested in the last hour.');
  const wait = histogram('mq_pr_wait_duration_1h_seconds', 'Seconds from submission to first test start, for PRs that started testing in the last hour.');
  const test = histogram('mq_pr_test_duration_1h_seconds', 'Seconds test runs took, for runs that finished in the last hour.');
  const inQueue = histogram('mq_pr_time_in_queue_1h_seconds', 'Seconds from submission to conclusion, for PRs concluded in the last hour.');

  const since = new Date(now.getTime() - HOUR_MS);
  for (const queue of queues) {
    const labels = { repo: `${queue.repo.owner}/${queue.repo.name}`, branch: queue.targetBranch };
    const [enqueued, changed, runsInProgress, finishedRuns] = await Promise.all([
      enqueuedOf(queue.id),
      stores.entries.listChangedSince(queue.id, since),
      stores.testRuns.countInProgress(queue.id),
      stores.testRuns.listFinishedSince(queue.id, since),
    ]);
    depth.set(labels, enqueued.length);
    awaiting.set(labels, enqueued.filter(awaitsMergeability).length);
    slots.set(labels, runsInProgress);
    // Touch the histograms so every queue shows its series, even when empty.
    wait.zero(labels);
    test.zero(labels);
    inQueue.zero(labels);
    // Every attempt of an entry counts, not just its current one: a PR cancelled and
    // submitted again within the hour still concluded once (its history says so).
    const tally = { MERGED: 0, FAILED: 0, CANCELLED: 0, restarts: 0 };
    for (const entry of changed) {
      let attemptStart = entry.submittedAt;
      let tested = false;
      for (const event of entry.timeline) {
        if (event.reason === 'submitted' || event.reason === 'resubmitted') {
          attemptStart = event.at;
          tested = false;
        }
        if (event.at < since) {
          if (event.state === 'TESTING') tested = true;
          continue;
        }
        if (event.reason === 'restart_requested') tally.restarts += 1;
        if (event.state === 'TESTING' && !tested) {
          tested = true;
          wait.observe(labels, seconds(attemptStart, event.at));
        }
        if (event.state === 'MERGED' || event.state === 'FAILED' || event.state === 'CANCELLED') {
          tally[event.state] += 1;
          inQueue.observe(labels, seconds(attemptStart, event.at));
        }
      }
    }
    for (const conclusion of ['merged', 'failed', 'cancelled'] as const) {
      conclusions.set({ ...labels, conclusion }, tally[conclusion.toUpperCase() as 'MERGED' | 'FAILED' | 'CANCELLED']);
    }
    restarts.set(labels, tally.restarts);
    for (const run of finishedRuns) observeRun(test, labels, run);
  }
  return registry.metrics();
}

function seconds(from: Date, to: Date): number {
  return Math.max(0, (to.getTime() - from.getTime()) / 1000);
}

function awaitsMergeability(entry: QueueEntryRecord): boolean {
  const mergeability = entry.facts?.mergeability ?? 'unspecified';
  return entry.state === 'NOT_READY' && (mergeability === 'unspecified' || mergeability === 'in_progress');
}

function observeRun(histogram: Histogram<string>, labels: Record<string, string>, run: TestRunRecord): void {
  if (run.finishedAt) histogram.observe(labels, seconds(run.createdAt, run.finishedAt));
}
