import type { StrategyMetrics } from '../src/simulation/metrics.js';
import type { SeedSummary } from './seed-summary.js';

const COLUMNS: Array<[string, (m: StrategyMetrics) => string]> = [
  ['strategy', (m) => m.strategy],
  ['merged', (m) => String(m.merged)],
  ['merged/h', (m) => m.mergedPerHour.toFixed(2)],
  ['makespan h', (m) => m.makespanHours.toFixed(1)],
  ['p50 min', (m) => fixed(m.p50QueueMinutes, 0)],
  ['p95 min', (m) => fixed(m.p95QueueMinutes, 0)],
  ['runs/merged', (m) => fixed(m.runsPerMerged, 2)],
  ['CI h', (m) => m.ciHours.toFixed(0)],
  ['broken', (m) => String(m.brokenMerges)],
  ['ejected', (m) => String(m.ejected)],
  ['wrongly ejected', (m) => String(m.wronglyEjected)],
  ['stuck', (m) => String(m.stuck)],
];

/** Means over seeds, with the worst seed in brackets for the columns the goals judge. */
const SUMMARY_COLUMNS: Array<[string, (s: SeedSummary) => string]> = [
  ['strategy', (s) => s.mean.strategy],
  ['merged', (s) => s.mean.merged.toFixed(0)],
  ['merged/h (worst)', (s) => `${s.mean.mergedPerHour.toFixed(2)} (${s.worst.mergedPerHour.toFixed(2)})`],
  ['makespan h', (s) => s.mean.makespanHours.toFixed(1)],
  ['p50 min', (s) => fixed(s.mean.p50QueueMinutes, 0)],
  ['p95 min (worst)', (s) => `${fixed(s.mean.p95QueueMinutes, 0)} (${fixed(s.worst.p95QueueMinutes, 0)})`],
  ['runs/merged (worst)', (s) => `${fixed(s.mean.runsPerMerged, 2)} (${fixed(s.worst.runsPerMerged, 2)})`],
  ['CI h', (s) => s.mean.ciHours.toFixed(0)],
  ['broken (worst)', (s) => `${count(s.mean.brokenMerges)} (${s.worst.brokenMerges})`],
  ['ejected', (s) => count(s.mean.ejected)],
  ['wrongly ejected', (s) => count(s.mean.wronglyEjected)],
  ['stuck', (s) => count(s.mean.stuck)],
];

function fixed(value: number | null, digits: number): string {
  return value === null ? '-' : value.toFixed(digits);
}

/** A mean of counts: whole when it is, else one decimal. */
function count(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

/** A plain-text table (also valid Markdown): a row per item, the first column left-aligned. */
export function table<T>(columns: Array<[string, (row: T) => string]>, rows: T[]): string {
  const cells = [columns.map(([name]) => name), ...rows.map((row) => columns.map(([, get]) => get(row)))];
  const widths = columns.map((_, i) => Math.max(...cells.map((r) => (r[i] as string).length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(cells[0] as string[]), rule, ...cells.slice(1).map(line)].join('\n');
}

/** One row per strategy on one seed. */
export function formatTable(rows: StrategyMetrics[]): string {
  return table(COLUMNS, rows);
}

/** One row per strategy over several seeds. */
export function formatSummaryTable(rows: SeedSummary[]): string {
  return table(SUMMARY_COLUMNS, rows);
}
