import type { SimRecord } from './sim-record.js';
import { HOUR, MINUTE } from './workload.js';

/** The benchmark's columns for one strategy on one workload. */
export interface StrategyMetrics {
  strategy: string;
  merged: number;
  /** PRs the strategy gave up on (breaking, conflicting or wrongly). */
  ejected: number;
  wronglyEjected: number;
  /** PRs neither merged nor ejected when the simulation ended: a liveness bug. */
  stuck: number;
  mergedPerHour: number;
  /** First arrival to the last PR's merge or ejection. */
  makespanHours: number;
  /** Arrival to merge, merged PRs only. */
  p50QueueMinutes: number | null;
  p95QueueMinutes: number | null;
  runs: number;
  runsPerMerged: number | null;
  /** PRs that landed without a run (direct merge). */
  landedWithoutRun: number;
  ciHours: number;
  brokenMerges: number;
  violations: number;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? null;
}

export function metricsOf(record: SimRecord): StrategyMetrics {
  const merged = record.prs.filter((p) => p.mergedAt !== null);
  const ejected = record.prs.filter((p) => p.ejectedAt !== null);
  const start = Math.min(...record.prs.map((p) => p.arrivesAt));
  const ends = record.prs.map((p) => p.mergedAt ?? p.ejectedAt ?? start);
  const makespan = Math.max(...ends) - start;
  const waits = merged.map((p) => ((p.mergedAt as number) - p.arrivesAt) / MINUTE).sort((a, b) => a - b);
  return {
    strategy: record.strategy,
    merged: merged.length,
    ejected: ejected.length,
    wronglyEjected: record.wronglyEjected,
    stuck: record.prs.length - merged.length - ejected.length,
    mergedPerHour: makespan > 0 ? merged.length / (makespan / HOUR) : 0,
    makespanHours: makespan / HOUR,
    p50QueueMinutes: percentile(waits, 50),
    p95QueueMinutes: percentile(waits, 95),
    runs: record.runsStarted,
    runsPerMerged: merged.length > 0 ? record.runsStarted / merged.length : null,
    landedWithoutRun: record.runsWithoutCi,
    ciHours: record.ciMs / HOUR,
    brokenMerges: record.brokenMerges,
    violations: record.violations.length,
  };
}
