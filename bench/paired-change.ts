import type { StrategyMetrics } from '../src/simulation/metrics.js';

/**
 * One engine against another on the same seeds (bench/queue-tune-default.ts --save, --compare): seed to seed a small
 * change reshuffles which runs fail first, so a single seed can move by half either way while the mean barely moves.
 * Comparing each seed with itself and giving the mean change its standard error says whether a difference is more
 * than that noise.
 */

/** The default row's results of a run, by workload and seed. */
export type SeedResults = Record<string, Record<string, Pick<StrategyMetrics, 'p95QueueMinutes' | 'mergedPerHour'>>>;

export interface PairedChange {
  seeds: number;
  /** Mean over the seeds of log(after / before) of p95 time in queue, and its standard error. */
  meanLogRatio: number;
  standardError: number;
  better: number;
  worse: number;
  /** Mean of after − before, merged PRs an hour. */
  mergedPerHourDiff: number;
}

/** The change from `before` to `after` over the seeds both have with a p95; null when they share none. */
export function pairedChange(before: SeedResults[string], after: SeedResults[string]): PairedChange | null {
  const pairs = Object.keys(after)
    .filter((seed) => before[seed] !== undefined)
    .map((seed) => ({ b: before[seed] as SeedResults[string][string], a: after[seed] as SeedResults[string][string] }))
    .filter(({ a, b }) => (a.p95QueueMinutes ?? 0) > 0 && (b.p95QueueMinutes ?? 0) > 0);
  const n = pairs.length;
  if (n === 0) return null;
  const logRatios = pairs.map(({ a, b }) => Math.log((a.p95QueueMinutes as number) / (b.p95QueueMinutes as number)));
  const mean = logRatios.reduce((s, v) => s + v, 0) / n;
  const variance = n > 1 ? logRatios.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1) : 0;
  return {
    seeds: n,
    meanLogRatio: mean,
    standardError: Math.sqrt(variance / n),
    better: logRatios.filter((v) => v < 0).length,
    worse: logRatios.filter((v) => v > 0).length,
    mergedPerHourDiff: pairs.reduce((s, { a, b }) => s + a.mergedPerHour - b.mergedPerHour, 0) / n,
  };
}

export function formatPairedChange(change: PairedChange): string {
  const percent = (v: number) => `${v >= 0 ? '+' : ''}${(100 * v).toFixed(1)} %`;
  return `p95 ${percent(change.meanLogRatio)} ± ${(100 * change.standardError).toFixed(1)} % per seed (log-ratio, mean ± standard error), ${change.better} seeds better, ${change.worse} worse, merged/h ${change.mergedPerHourDiff >= 0 ? '+' : ''}${change.mergedPerHourDiff.toFixed(3)}, over ${change.seeds} seeds`;
}
