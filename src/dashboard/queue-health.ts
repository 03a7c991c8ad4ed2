import type { QueueEntryRecord, TestRunRecord } from '../domain/records.js';

/**
 * A queue's health over a window, from stored facts only (entry timelines and
 * finished test runs): any replica computes the same, and nothing is lost on a
 * restart. Pure: the caller reads the facts and passes the window.
 */

/** One bucket of the window (e.g. an hour). */
export interface HealthBucket {
  /** Start of the bucket, epoch ms. */
  start: number;
  merged: number;
  /** Ejections (FAILED) in the bucket, by reason. */
  ejected: Record<string, number>;
  cancelled: number;
  restarts: number;
  /** Failed runs tested again by the queue (retryFailedTests). */
  retries: number;
  /** Test runs that finished in the bucket (CI runs spent). */
  ciRuns: number;
  /** Minutes from submission to merge, for PRs merged in the bucket (null when none merged). */
  timeInQueueP50: number | null;
  timeInQueueP95: number | null;
}

export interface QueueHealth {
  from: number;
  to: number;
  bucketMs: number;
  buckets: HealthBucket[];
  totals: {
    merged: number;
    ejected: Record<string, number>;
    restarts: number;
    retries: number;
    ciRuns: number;
    /** CI runs spent per merged PR over the window (null when nothing merged). */
    ciRunsPerMerged: number | null;
    timeInQueueP50: number | null;
    timeInQueueP95: number | null;
  };
}

const MINUTE_MS = 60_000;

export function queueHealth(entries: QueueEntryRecord[], runs: TestRunRecord[], window: { from: number; to: number; bucketMs: number }): QueueHealth {
  const { from, to, bucketMs } = window;
  const count = Math.max(1, Math.ceil((to - from) / bucketMs));
  const buckets: HealthBucket[] = Array.from({ length: count }, (_, i) => ({ start: from + i * bucketMs, merged: 0, ejected: {}, cancelled: 0, restarts: 0, retries: 0, ciRuns: 0, timeInQueueP50: null, timeInQueueP95: null }));
  const waits: number[][] = buckets.map(() => []);
  const bucketOf = (at: number): number | null => (at < from || at >= to ? null : Math.min(count - 1, Math.floor((at - from) / bucketMs)));

  for (const entry of entries) {
    // Each attempt counts on its own: a PR cancelled and submitted again concluded twice.
    let attemptStart = entry.submittedAt.getTime();
    for (const event of entry.timeline) {
      const at = event.at.getTime();
      if (event.reason === 'submitted' || event.reason === 'resubmitted') attemptStart = at;
      const index = bucketOf(at);
      if (index === null) continue;
      const bucket = buckets[index] as HealthBucket;
      if (event.reason === 'restart_requested') bucket.restarts += 1;
      if (event.reason === 'retried') bucket.retries += 1;
      if (event.state === 'MERGED') {
        bucket.merged += 1;
        (waits[index] as number[]).push((at - attemptStart) / MINUTE_MS);
      } else if (event.state === 'FAILED') {
        bucket.ejected[event.reason] = (bucket.ejected[event.reason] ?? 0) + 1;
      } else if (event.state === 'CANCELLED') {
        bucket.cancelled += 1;
      }
    }
  }
  for (const run of runs) {
    const index = run.finishedAt ? bucketOf(run.finishedAt.getTime()) : null;
    // Runs that never got a test branch spent no CI.
    // A direct merge spent no CI: it is not a CI run.
    if (index !== null && run.testBranchSha && !run.landedWithoutCi) (buckets[index] as HealthBucket).ciRuns += 1;
  }
  buckets.forEach((bucket, i) => {
    const sorted = (waits[i] as number[]).sort((a, b) => a - b);
    bucket.timeInQueueP50 = percentile(sorted, 0.5);
    bucket.timeInQueueP95 = percentile(sorted, 0.95);
  });
  const all = waits.flat().sort((a, b) => a - b);
  const merged = buckets.reduce((n, b) => n + b.merged, 0);
  const ciRuns = buckets.reduce((n, b) => n + b.ciRuns, 0);
  const ejected: Record<string, number> = {};
  for (const bucket of buckets) for (const [reason, n] of Object.entries(bucket.ejected)) ejected[reason] = (ejected[reason] ?? 0) + n;
  return {
    from,
    to,
    bucketMs,
    buckets,
    totals: {
      merged,
      ejected,
      restarts: buckets.reduce((n, b) => n + b.restarts, 0),
      retries: buckets.reduce((n, b) => n + b.retries, 0),
      ciRuns,
      ciRunsPerMerged: merged > 0 ? Math.round((ciRuns / merged) * 100) / 100 : null,
      timeInQueueP50: percentile(all, 0.5),
      timeInQueueP95: percentile(all, 0.95),
    },
  };
}

/** Nearest-rank percentile of sorted values, in minutes rounded to 0.1; null when empty. */
export function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const value = sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number;
  return Math.round(value * 10) / 10;
}
