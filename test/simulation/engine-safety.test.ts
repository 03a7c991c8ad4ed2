import fc from 'fast-check';
import { metricsOf } from '../../src/simulation/metrics.js';
import { simulate } from '../../src/simulation/simulator.js';
import { EngineStrategy } from '../../src/simulation/strategies/engine-strategy.js';
import { generateWorkload } from '../../src/simulation/workload.js';
import { MIN, tinyWorkload } from './tiny-workload.js';

test('our engine, driven through decide(), merges a green PR after one run', () => {
  const record = simulate(tinyWorkload([{ number: 1 }, { number: 2, breaks: true }]), new EngineStrategy({ concurrency: 2 }), { seed: 1, capacity: 2 });
  expect(record.prs.map((p) => [p.number, p.mergedAt, p.ejectedAt])).toEqual([
    [1, 30 * MIN, null],
    [2, null, 30 * MIN],
  ]);
  expect(record.runsStarted).toBe(2);
});

const configArb = fc.record({
  mode: fc.constantFrom('single' as const, 'parallel' as const),
  concurrency: fc.integer({ min: 1, max: 4 }),
  batch: fc.boolean(),
  batchingMinSize: fc.integer({ min: 1, max: 4 }),
  batchingMaxWaitTimeMinutes: fc.constantFrom(0, 10, 45),
  bisectionConcurrency: fc.integer({ min: 1, max: 4 }),
  pendingFailureDepth: fc.integer({ min: 0, max: 2 }),
  canOptimisticallyMerge: fc.boolean(),
  testingTimeoutMinutes: fc.constantFrom(20, 60),
});

const specArb = fc.record({
  breakRate: fc.constantFrom(0, 0.1, 0.3),
  runFlakeRate: fc.constantFrom(0, 0.05, 0.2),
  conflictRate: fc.constantFrom(0, 0.1),
  targetGroups: fc.integer({ min: 1, max: 3 }),
  arrivalsPerHour: fc.constantFrom(2, 8, 30),
});

test('our engine never merges untested or broken content and leaves no PR behind, on small random workloads', () => {
  fc.assert(
    fc.property(configArb, specArb, fc.integer({ min: 1, max: 1_000_000 }), (config, over, seed) => {
      const spec = { name: 'prop', description: 'random', prCount: 25, ci: { meanMinutes: 30, jitterMinutes: 10 }, mergeMinutes: 0.25, ...over };
      const capacity = config.concurrency;
      const record = simulate(generateWorkload(spec, seed), new EngineStrategy(config), { seed, capacity });
      const metrics = metricsOf(record);
      expect(record.violations).toEqual([]);
      expect(metrics.brokenMerges).toBe(0);
      expect(metrics.stuck).toBe(0);
    }),
    { numRuns: 60 },
  );
});

test('the default adaptive queue, given risk hints, never merges untested or broken content and leaves no PR behind', () => {
  // Hints and failed batches make PRs likely to break (a failed batch's blame): runs behind are
  // built without them, so they must never land in one run with PRs those runs were built on.
  fc.assert(
    fc.property(
      fc.constantFrom('single' as const, 'parallel' as const),
      fc.integer({ min: 1, max: 4 }),
      specArb,
      fc.integer({ min: 1, max: 1_000_000 }),
      (mode, concurrency, over, seed) => {
        const spec = { name: 'prop', description: 'random', prCount: 40, ci: { meanMinutes: 30, jitterMinutes: 10 }, mergeMinutes: 0.25, ...over };
        const record = simulate(generateWorkload(spec, seed), new EngineStrategy({ mode, concurrency, testingTimeoutMinutes: 60 }, 'ours', true), { seed, capacity: concurrency });
        const metrics = metricsOf(record);
        expect(record.violations).toEqual([]);
        expect(metrics.brokenMerges).toBe(0);
        expect(metrics.stuck).toBe(0);
      },
    ),
    { numRuns: 80 },
  );
});
