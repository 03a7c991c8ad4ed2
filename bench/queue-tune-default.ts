import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { metricsOf, type StrategyMetrics } from '../src/simulation/metrics.js';
import { simulate } from '../src/simulation/simulator.js';
import { EngineStrategy } from '../src/simulation/strategies/engine-strategy.js';
import { generateWorkload } from '../src/simulation/workload.js';
import { formatPairedChange, pairedChange, type SeedResults } from './paired-change.js';
import { CI_CAPACITY, DEFAULT_ROW, WORKLOADS } from './queue-workloads.js';
import { strategiesFor } from './run-strategies.js';

/**
 * `node dist-bench/bench/queue-tune-default.js --only a,b --seeds 6,7,8,9,10`: the
 * default row ('ours', with hints) against the peers and the oracle on seeds
 * other than the reported 1 to 5, for tuning the adaptive engine's own choices.
 * The peers do not change with the engine, so their results are kept in --cache.
 * `--save FILE` keeps the default row's per-seed results; `--compare FILE` (a
 * file saved by another build, on the same seeds) prints each workload's
 * change seed by seed, with its standard error (paired-change.ts).
 */
function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const seeds = (argValue('--seeds') ?? '6,7,8,9,10').split(',').map(Number);
const only = argValue('--only')?.split(',');
const cache = argValue('--cache');
const save = argValue('--save');
const compare = argValue('--compare');
const before = compare ? (JSON.parse(readFileSync(compare, 'utf8')) as SeedResults) : null;
const results: SeedResults = {};
const out = (text = '') => process.stdout.write(`${text}\n`);

function peersOf(bench: (typeof WORKLOADS)[number], seed: number): StrategyMetrics[] {
  const file = cache ? `${cache}/${bench.spec.name}-${seed}.json` : null;
  if (file && existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as StrategyMetrics[];
  const workload = generateWorkload(bench.spec, seed);
  const others = strategiesFor(bench, workload.conflicts).filter((s) => !s.name.startsWith('ours'));
  const metrics = others.map((s) => metricsOf(simulate(workload, s, { seed, capacity: CI_CAPACITY })));
  if (file) writeFileSync(file, JSON.stringify(metrics));
  return metrics;
}

const f = (v: number | null, d = 0) => (v === null ? '-' : v.toFixed(d));
for (const bench of WORKLOADS.filter((w) => !only || only.includes(w.spec.name))) {
  const lines: string[] = [];
  let rateWins = 0;
  let p95Wins = 0;
  let worstRatio = 0;
  let sumP95 = 0;
  let sumRate = 0;
  let maxRuns = 0;
  let broken = 0;
  for (const seed of seeds) {
    const workload = generateWorkload(bench.spec, seed);
    const ours = metricsOf(simulate(workload, new EngineStrategy(DEFAULT_ROW, 'ours', true), { seed, capacity: CI_CAPACITY }));
    (results[bench.spec.name] ??= {})[seed] = { p95QueueMinutes: ours.p95QueueMinutes, mergedPerHour: ours.mergedPerHour };
    const others = peersOf(bench, seed);
    const peers = others.filter((m) => m.strategy !== 'oracle');
    const oracle = others.find((m) => m.strategy === 'oracle') as StrategyMetrics;
    const bestRate = peers.reduce((b, m) => (m.mergedPerHour > b.mergedPerHour ? m : b));
    const bestP95 = peers.reduce((b, m) => ((m.p95QueueMinutes ?? Infinity) < (b.p95QueueMinutes ?? Infinity) ? m : b));
    const ratio = (ours.p95QueueMinutes ?? Infinity) / (oracle.p95QueueMinutes ?? 1);
    if (ours.mergedPerHour > bestRate.mergedPerHour) rateWins++;
    if ((ours.p95QueueMinutes ?? Infinity) < (bestP95.p95QueueMinutes ?? Infinity)) p95Wins++;
    worstRatio = Math.max(worstRatio, ratio);
    sumP95 += ours.p95QueueMinutes ?? 0;
    sumRate += ours.mergedPerHour;
    maxRuns = Math.max(maxRuns, ours.runsPerMerged ?? 0);
    broken += ours.brokenMerges + ours.violations + ours.stuck;
    lines.push(
      `  seed ${seed}: ours ${ours.merged}m ${f(ours.makespanHours, 1)}h ${f(ours.mergedPerHour, 2)}/h p95 ${f(ours.p95QueueMinutes)} runs/merged ${f(ours.runsPerMerged, 2)} broken ${ours.brokenMerges + ours.violations} | best rate ${bestRate.merged}m ${f(bestRate.makespanHours, 1)}h ${f(bestRate.mergedPerHour, 2)} (${bestRate.strategy}) best p95 ${f(bestP95.p95QueueMinutes)} (${bestP95.strategy}) oracle ${f(oracle.p95QueueMinutes)} x${ratio.toFixed(2)}`,
    );
  }
  out(`(${bench.spec.name}) rate wins ${rateWins}/${seeds.length}, p95 wins ${p95Wins}/${seeds.length}, worst x${worstRatio.toFixed(2)}, mean p95 ${(sumP95 / seeds.length).toFixed(0)}, mean rate ${(sumRate / seeds.length).toFixed(2)}, max runs/merged ${maxRuns.toFixed(2)}, broken+violations+stuck ${broken}`);
  const change = before?.[bench.spec.name] ? pairedChange(before[bench.spec.name] as SeedResults[string], results[bench.spec.name] ?? {}) : null;
  if (before) out(`  against ${compare}: ${change ? formatPairedChange(change) : 'no seed in common'}`);
  for (const l of lines) out(l);
}
if (save) writeFileSync(save, `${JSON.stringify(results)}\n`);
