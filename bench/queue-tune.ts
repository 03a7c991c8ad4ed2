import type { QueueConfig } from '../src/domain/queue-config.js';
import { metricsOf, type StrategyMetrics } from '../src/simulation/metrics.js';
import { simulate } from '../src/simulation/simulator.js';
import { EngineStrategy } from '../src/simulation/strategies/engine-strategy.js';
import { generateWorkload } from '../src/simulation/workload.js';
import { formatTable } from './format-table.js';
import { CI_CAPACITY, WORKLOADS } from './queue-workloads.js';

/**
 * `node dist-bench/bench/queue-tune.js --only a [--seeds 6,7,8]`: our engine
 * over a grid of the settings a user can choose, on seeds other than the
 * benchmark's 1 to 5 (default 6, 7 and 8), so the tuned settings in
 * queue-workloads.ts are not fitted to the streams they are reported on.
 * Ranked by p95 time in queue, then merged PRs/hour.
 */
function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function grid(parallel: boolean, testingTimeoutMinutes: number | undefined): Array<Partial<QueueConfig>> {
  const configs: Array<Partial<QueueConfig>> = [];
  const failureHandling = [0, 1, 2].flatMap((pendingFailureDepth) => [false, true].map((canOptimisticallyMerge) => ({ pendingFailureDepth, canOptimisticallyMerge })));
  // Parallel mode batches within each lane, so both modes share the batching grid.
  const batching: Array<Partial<QueueConfig>> = [
    { batch: false },
    ...[1, 2, 3].flatMap((batchingMinSize) =>
      (batchingMinSize === 1 ? [0] : [10, 30]).flatMap((batchingMaxWaitTimeMinutes) => [1, 2, 4].map((bisectionConcurrency) => ({ batch: true, batchingMinSize, batchingMaxWaitTimeMinutes, bisectionConcurrency }))),
    ),
  ];
  // The workload's run timeout is not tuned: it only has to be above its CI's longest run.
  const timeout = testingTimeoutMinutes === undefined ? {} : { testingTimeoutMinutes };
  for (const b of batching) for (const f of failureHandling) configs.push({ mode: parallel ? 'parallel' : 'single', concurrency: CI_CAPACITY, ...timeout, ...b, ...f });
  return configs;
}

const seeds = (argValue('--seeds') ?? '6,7,8').split(',').map(Number);
const only = argValue('--only')?.split(',');
const out = (text = '') => process.stdout.write(`${text}\n`);

for (const bench of WORKLOADS.filter((w) => !only || only.includes(w.spec.name))) {
  const workloads = seeds.map((seed) => ({ seed, workload: generateWorkload(bench.spec, seed) }));
  const ranked = grid(bench.tuned.mode === 'parallel', bench.tuned.testingTimeoutMinutes).map((config, i) => {
    const runs = workloads.map(({ seed, workload }) => metricsOf(simulate(workload, new EngineStrategy(config, `#${i}`), { seed, capacity: CI_CAPACITY })));
    const mean = (get: (m: StrategyMetrics) => number) => runs.reduce((s, m) => s + get(m), 0) / runs.length;
    return { config, runs, p95: mean((m) => m.p95QueueMinutes ?? Infinity), rate: mean((m) => m.mergedPerHour) };
  });
  ranked.sort((x, y) => x.p95 - y.p95 || y.rate - x.rate);
  out(`## (${bench.spec.name}) tuning on seeds ${seeds.join(',')}: best 5 of ${ranked.length}`);
  for (const r of ranked.slice(0, 5)) {
    out(JSON.stringify(r.config));
    out(formatTable(r.runs));
  }
  out();
}
