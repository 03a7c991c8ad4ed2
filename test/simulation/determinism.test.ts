import { metricsOf } from '../../src/simulation/metrics.js';
import { simulate } from '../../src/simulation/simulator.js';
import { EngineStrategy } from '../../src/simulation/strategies/engine-strategy.js';
import { GithubMergeQueueStrategy } from '../../src/simulation/strategies/github-merge-queue.js';
import { generateWorkload, type WorkloadSpec } from '../../src/simulation/workload.js';

const spec: WorkloadSpec = {
  name: 'det',
  description: 'small',
  prCount: 60,
  arrivalsPerHour: 8,
  breakRate: 0.1,
  runFlakeRate: 0.05,
  ci: { meanMinutes: 30, jitterMinutes: 5 },
  targetGroups: 1,
  conflictRate: 0.05,
  mergeMinutes: 0.25,
};

const config = { concurrency: 4, batch: true, bisectionConcurrency: 2, canOptimisticallyMerge: true, pendingFailureDepth: 1 };

test('the same seed gives the same PR stream and the same simulation, to the millisecond', () => {
  expect(generateWorkload(spec, 5)).toEqual(generateWorkload(spec, 5));
  const run = () => simulate(generateWorkload(spec, 5), new EngineStrategy(config), { seed: 5, capacity: 4 });
  const first = run();
  expect(run()).toEqual(first);
  expect(first.prs.some((p) => p.mergedAt !== null)).toBe(true);
});

test('another seed gives another stream and other numbers', () => {
  expect(generateWorkload(spec, 5).prs).not.toEqual(generateWorkload(spec, 6).prs);
  const metrics = (seed: number) => metricsOf(simulate(generateWorkload(spec, seed), new GithubMergeQueueStrategy(4), { seed, capacity: 4 }));
  expect(metrics(5)).not.toEqual(metrics(6));
});

test('the generated stream follows its spec: count, Poisson rate, breakage, groups', () => {
  const big = generateWorkload({ ...spec, prCount: 2000, targetGroups: 4, conflictRate: 0 }, 1);
  expect(big.prs).toHaveLength(2000);
  const hours = (big.prs.at(-1)?.arrivesAt ?? 0) / 3_600_000;
  expect(2000 / hours).toBeGreaterThan(7);
  expect(2000 / hours).toBeLessThan(9);
  const broken = big.prs.filter((p) => p.breaks).length / 2000;
  expect(broken).toBeGreaterThan(0.08);
  expect(broken).toBeLessThan(0.12);
  expect(new Set(big.prs.map((p) => String(p.targets)))).toEqual(new Set(['group-0', 'group-1', 'group-2', 'group-3']));
});
