import { EtaProbe, etaAccuracy } from '../../src/forecast/eta-probe.js';
import { simulate } from '../../src/simulation/simulator.js';
import { EngineStrategy } from '../../src/simulation/strategies/engine-strategy.js';
import { generateWorkload, type WorkloadSpec } from '../../src/simulation/workload.js';
import { MIN, tinyWorkload } from '../simulation/tiny-workload.js';

test('on a CI that always takes 30 minutes and never fails, the ETA given at submission is the merge time', () => {
  const workload = tinyWorkload([0, 10, 20, 25, 70, 71].map((minute, i) => ({ number: i + 1, arrivesAt: minute * MIN })));
  const probe = new EtaProbe(new EngineStrategy({ concurrency: 2 }), { fallback: { ciDurationMs: 30 * MIN, failureRate: 0 } });
  const record = simulate(workload, probe, { seed: 1, capacity: 2 });
  expect(record.prs.every((p) => p.mergedAt !== null)).toBe(true);
  expect(Object.fromEntries(probe.etas)).toEqual(Object.fromEntries(record.prs.map((p) => [p.number, p.mergedAt])));
  expect(etaAccuracy(probe.etas, record)).toEqual({ measured: 6, medianAbsErrorMinutes: 0, p90AbsErrorMinutes: 0, medianBiasMinutes: 0 });
});

test('the probe changes nothing in the simulation, and measures every merged PR', () => {
  const spec: WorkloadSpec = {
    name: 'probe',
    description: 'small',
    prCount: 80,
    arrivalsPerHour: 8,
    breakRate: 0.1,
    runFlakeRate: 0.05,
    ci: { meanMinutes: 30, jitterMinutes: 5 },
    targetGroups: 1,
    conflictRate: 0.05,
    mergeMinutes: 0.25,
  };
  const config = { concurrency: 4, batch: true, bisectionConcurrency: 2, canOptimisticallyMerge: true, pendingFailureDepth: 1 };
  const plain = simulate(generateWorkload(spec, 3), new EngineStrategy(config), { seed: 3, capacity: 4 });
  const probe = new EtaProbe(new EngineStrategy(config));
  const probed = simulate(generateWorkload(spec, 3), probe, { seed: 3, capacity: 4 });
  expect(probed).toEqual(plain);
  const accuracy = etaAccuracy(probe.etas, probed);
  expect(accuracy.measured).toBe(probed.prs.filter((p) => p.mergedAt !== null).length);
  expect(accuracy.p90AbsErrorMinutes).toBeGreaterThanOrEqual(accuracy.medianAbsErrorMinutes as number);
});
