import type { StrategyMetrics } from '../src/simulation/metrics.js';
import type { WorkloadResult } from './run-strategies.js';

/** The columns a goal is judged on, at their worst seed. */
export interface WorstSeed {
  mergedPerHour: number;
  /** Null when some seed merged nothing. */
  p95QueueMinutes: number | null;
  runsPerMerged: number | null;
  brokenMerges: number;
}

/** One strategy over several seeds of a workload. */
export interface SeedSummary {
  /** Every column averaged over the seeds; a column that is null on any seed is null. */
  mean: StrategyMetrics;
  worst: WorstSeed;
}

type NumericKey = { [K in keyof StrategyMetrics]: StrategyMetrics[K] extends number | null ? K : never }[keyof StrategyMetrics];

function meanOf(rows: StrategyMetrics[], key: NumericKey): number | null {
  const values = rows.map((m) => m[key]);
  if (values.some((v) => v === null)) return null;
  return (values as number[]).reduce((s, v) => s + v, 0) / values.length;
}

function maxOrNull(values: Array<number | null>): number | null {
  return values.some((v) => v === null) ? null : Math.max(...(values as number[]));
}

/** Per strategy, in the order of the first seed's rows: mean over the seeds and the worst seed's value. */
export function summarizeSeeds(results: WorkloadResult[]): SeedSummary[] {
  const strategies = results[0]?.metrics.map((m) => m.strategy) ?? [];
  return strategies.map((strategy) => {
    const rows = results.map((r) => r.metrics.find((m) => m.strategy === strategy)).filter((m): m is StrategyMetrics => m !== undefined);
    const first = rows[0] as StrategyMetrics;
    const mean = { ...first };
    for (const key of Object.keys(first) as Array<keyof StrategyMetrics>) {
      if (key !== 'strategy') (mean as unknown as Record<string, number | null>)[key] = meanOf(rows, key);
    }
    return {
      mean,
      worst: {
        mergedPerHour: Math.min(...rows.map((m) => m.mergedPerHour)),
        p95QueueMinutes: maxOrNull(rows.map((m) => m.p95QueueMinutes)),
        runsPerMerged: maxOrNull(rows.map((m) => m.runsPerMerged)),
        brokenMerges: Math.max(...rows.map((m) => m.brokenMerges)),
      },
    };
  });
}

/** Mean of the non-null values; null when there are none. */
export function meanOfPresent(values: Array<number | null>): number | null {
  const present = values.filter((v): v is number => v !== null);
  return present.length > 0 ? present.reduce((s, v) => s + v, 0) / present.length : null;
}
