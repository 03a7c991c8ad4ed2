import type { StrategyMetrics } from '../src/simulation/metrics.js';
import { table } from './format-table.js';
import type { WorkloadResult } from './run-strategies.js';
import { meanOfPresent as mean } from './seed-summary.js';

/** One hint quality over the seeds: ours' metrics on each seed, beside the oracle's on the same seed. */
interface HintRow {
  label: string;
  r: Array<number | null>;
  ours: StrategyMetrics[];
  oracle: StrategyMetrics[];
}

const fixed = (value: number | null, digits: number) => (value === null ? '-' : value.toFixed(digits));
const max = (values: Array<number | null>) => (values.some((v) => v === null) ? null : Math.max(...(values as number[])));

const COLUMNS: Array<[string, (row: HintRow) => string]> = [
  ['hints', (row) => row.label],
  ['r (range)', (row) => {
    const present = row.r.filter((v): v is number => v !== null);
    return present.length === 0 ? '-' : `${fixed(mean(row.r), 2)} (${Math.min(...present).toFixed(2)}-${Math.max(...present).toFixed(2)})`;
  }],
  ['merged/h (worst)', (row) => `${fixed(mean(row.ours.map((m) => m.mergedPerHour)), 2)} (${Math.min(...row.ours.map((m) => m.mergedPerHour)).toFixed(2)})`],
  ['p95 min (worst)', (row) => `${fixed(mean(row.ours.map((m) => m.p95QueueMinutes)), 0)} (${fixed(max(row.ours.map((m) => m.p95QueueMinutes)), 0)})`],
  // Seed by seed, against the oracle on the same stream: the goal's measure.
  ['worst p95 / oracle', (row) => {
    const ratios = row.ours.map((m, i) => (m.p95QueueMinutes === null || !row.oracle[i]?.p95QueueMinutes ? null : m.p95QueueMinutes / row.oracle[i].p95QueueMinutes));
    return `${fixed(max(ratios), 2)}x`;
  }],
  ['runs/merged (worst)', (row) => `${fixed(mean(row.ours.map((m) => m.runsPerMerged)), 2)} (${fixed(max(row.ours.map((m) => m.runsPerMerged)), 2)})`],
  ['broken', (row) => String(row.ours.reduce((s, m) => s + m.brokenMerges + m.violations, 0))],
];

/**
 * What better risk hints would be worth: ours (the default configuration) with the stream's
 * own hints, then with hints drawn at each hintStudy separation, every seed's p95 set against
 * the oracle's on the same seed. Null when the workload has no study.
 */
export function formatHintStudy(perSeed: WorkloadResult[], separation: number): string | null {
  const studied = perSeed[0]?.hintStudy.map((h) => h.separation) ?? [];
  if (studied.length === 0) return null;
  const rowOf = (results: WorkloadResult[], strategy: string) => results.map((r) => r.metrics.find((m) => m.strategy === strategy) as StrategyMetrics);
  const oracle = rowOf(perSeed, 'oracle');
  const rows: HintRow[] = [
    { label: `the stream's (separation ${separation})`, r: perSeed.map((p) => p.riskCorrelation), ours: rowOf(perSeed, 'ours'), oracle },
    ...studied.map((s, i) => ({
      label: `separation ${s}`,
      r: perSeed.map((p) => p.hintStudy[i]?.riskCorrelation ?? null),
      ours: perSeed.map((p) => p.hintStudy[i]?.metrics as StrategyMetrics),
      oracle,
    })),
  ];
  return table(COLUMNS, rows);
}
