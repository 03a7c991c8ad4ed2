import type { StrategyMetrics } from '../src/simulation/metrics.js';

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

function fixed(value: number | null, digits: number): string {
  return value === null ? '-' : value.toFixed(digits);
}

/** A plain-text table (also valid Markdown) with one row per strategy. */
export function formatTable(rows: StrategyMetrics[]): string {
  const cells = [COLUMNS.map(([name]) => name), ...rows.map((row) => COLUMNS.map(([, get]) => get(row)))];
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((r) => (r[i] as string).length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(cells[0] as string[]), rule, ...cells.slice(1).map(line)].join('\n');
}
