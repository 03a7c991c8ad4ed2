import type { TestRunRecord } from '../domain/records.js';
import { MINUTE_MS } from '../engine/model.js';

/** What the merge forecast knows about a queue's CI: how long a run takes, and how often one fails. */
export interface CiHistory {
  /** Typical (median) duration of a finished test run, ms. */
  ciDurationMs: number;
  /** Share of recent finished runs that failed, 0..1. */
  failureRate: number;
}

/** One finished test run (cancelled runs say nothing about CI and are left out). */
export interface CiSample {
  durationMs: number;
  failed: boolean;
}

/**
 * What the forecast assumes before the queue has finished a run. Not the queue's
 * testingTimeoutMinutes: that is an upper bound (60 minutes by default) and would put
 * every first ETA hours late. 10 minutes is a common median for a pull request's CI;
 * the queue's own median replaces it from its first finished run. 10% failures is the
 * engine's own prior for sizing batches (engine/tuning.ts): both start from one belief.
 */
export const DEFAULT_CI_HISTORY: Readonly<CiHistory> = Object.freeze({ ciDurationMs: 10 * MINUTE_MS, failureRate: 0.1 });

/** How many runs the prior failure rate counts for: a few early failures do not make the queue look broken. */
const PRIOR_WEIGHT = 10;

/**
 * The history of a queue's recent finished runs (the caller picks the window):
 * their median duration, and their failure share shrunk toward the fallback's
 * while there are few of them. No runs: the fallback itself.
 */
export function ciHistoryOf(samples: readonly CiSample[], fallback: CiHistory = DEFAULT_CI_HISTORY): CiHistory {
  if (samples.length === 0) return { ...fallback };
  const durations = samples.map((s) => s.durationMs).sort((a, b) => a - b);
  const mid = durations.length >> 1;
  const median = durations.length % 2 === 1 ? (durations[mid] as number) : ((durations[mid - 1] as number) + (durations[mid] as number)) / 2;
  const failures = samples.filter((s) => s.failed).length;
  return { ciDurationMs: median, failureRate: (failures + fallback.failureRate * PRIOR_WEIGHT) / (samples.length + PRIOR_WEIGHT) };
}

/** The samples a queue's finished run records give: cancelled runs, runs that never got a test branch and direct merges (no CI ran) say nothing about CI. */
export function ciSamples(runs: readonly TestRunRecord[]): CiSample[] {
  return runs.flatMap((run) =>
    run.finishedAt && run.testBranchSha && !run.landedWithoutCi && (run.status === 'succeeded' || run.status === 'failed')
      ? [{ durationMs: run.finishedAt.getTime() - run.createdAt.getTime(), failed: run.status === 'failed' }]
      : [],
  );
}
