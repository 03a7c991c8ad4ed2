import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatTable } from './format-table.js';
import { checkGoals } from './goals.js';
import { CI_CAPACITY, WORKLOADS } from './queue-workloads.js';
import { DIRECT_ROW, runWorkload } from './run-strategies.js';

/**
 * `npm run bench:queue [-- --seed N] [-- --only a,c]`: every strategy on the
 * same simulated PR streams, one table per workload, JSON under bench/results/.
 * Deterministic: the same seed prints the same numbers.
 */
const DEFAULT_SEED = 1;

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const seed = Number(argValue('--seed') ?? DEFAULT_SEED);
if (!Number.isInteger(seed)) throw new Error('--seed takes an integer');
const only = argValue('--only')?.split(',');
const out = (text = '') => process.stdout.write(`${text}\n`);
const minutes = (value: number | null) => (value === null ? '-' : `${value.toFixed(0)} min`);

const results = WORKLOADS.filter((w) => !only || only.includes(w.spec.name)).map((bench) => {
  const started = Date.now();
  const result = runWorkload(bench, seed);
  out(`## (${result.workload}) ${result.description}`);
  out(`ours: ${JSON.stringify(result.ours)}`);
  out();
  out(formatTable(result.metrics));
  out();
  out(`ETA given at submission (ours, ${result.eta.measured} merged PRs): |error| median ${minutes(result.eta.medianAbsErrorMinutes)}, p90 ${minutes(result.eta.p90AbsErrorMinutes)}; median bias ${minutes(result.eta.medianBiasMinutes)} (+ = forecast late)`);
  const plain = result.metrics.find((m) => m.strategy === 'ours');
  const direct = result.metrics.find((m) => m.strategy === DIRECT_ROW);
  if (plain && direct) {
    out(`Direct merge (${DIRECT_ROW}: PRs up to date with the branch, own CI passed, nothing ahead, land without a run): ${direct.landedWithoutRun} PRs landed without a run, ${plain.runs - direct.runs} CI runs saved (${plain.runs} → ${direct.runs}; per merged PR ${plain.runsPerMerged?.toFixed(2)} → ${direct.runsPerMerged?.toFixed(2)}), p95 in queue ${minutes(plain.p95QueueMinutes)} → ${minutes(direct.p95QueueMinutes)}`);
  }
  for (const [strategy, violations] of Object.entries(result.violations)) out(`INVARIANT VIOLATIONS (${strategy}): ${violations.join('; ')}`);
  out(`(simulated in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  out();
  return result;
});

const goals = checkGoals(results);
out('## Goals (issue 3)');
for (const g of goals) out(`- [${g.met ? 'x' : ' '}] ${g.goal}: ${g.measured}`);

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const file = join(root, 'bench', 'results', seed === DEFAULT_SEED && !only ? 'queue.json' : `queue-seed-${seed}${only ? `-${only.join('')}` : ''}.json`);
mkdirSync(dirname(file), { recursive: true });
// Three decimals: stable diffs when the results file is committed, more precision than the table.
const round = (_key: string, value: unknown) => (typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 1000) / 1000 : value);
writeFileSync(file, `${JSON.stringify({ seed, capacity: CI_CAPACITY, results, goals }, round, 2)}\n`);
out();
out(`wrote ${file}`);
