import { simulate } from '../../src/simulation/simulator.js';
import type { SimRecord } from '../../src/simulation/sim-record.js';
import type { Strategy } from '../../src/simulation/strategy.js';
import { BorsStrategy } from '../../src/simulation/strategies/bors-batch-bisect.js';
import { GithubMergeQueueStrategy } from '../../src/simulation/strategies/github-merge-queue.js';
import { OracleStrategy } from '../../src/simulation/strategies/oracle.js';
import { SerialStrategy } from '../../src/simulation/strategies/serial.js';
import type { Workload } from '../../src/simulation/workload.js';
import { MIN, tinyWorkload } from './tiny-workload.js';

/** When each PR merged or was ejected, in minutes: `{1: 'merged@30', 2: 'ejected@60'}`. */
function outcomes(record: SimRecord): Record<number, string> {
  return Object.fromEntries(record.prs.map((p) => [p.number, p.mergedAt !== null ? `merged@${p.mergedAt / MIN}` : p.ejectedAt !== null ? `ejected@${p.ejectedAt / MIN}` : 'stuck']));
}

function run(workload: Workload, strategy: Strategy): SimRecord {
  const record = simulate(workload, strategy, { seed: 1, capacity: 4 });
  expect(record.violations).toEqual([]);
  expect(record.brokenMerges).toBe(0);
  return record;
}

test('serial: one PR at a time on the tip, merged if green, ejected if red', () => {
  const record = run(tinyWorkload([{ number: 1 }, { number: 2, breaks: true }, { number: 3 }]), new SerialStrategy());
  expect(outcomes(record)).toEqual({ 1: 'merged@30', 2: 'ejected@60', 3: 'merged@90' });
  expect(record.runsStarted).toBe(3);
  expect(record.maxConcurrentRuns).toBe(1);
});

test('bors-ng: everything waiting as one batch; a failed batch is halved until the culprit is alone', () => {
  const prs = [{ number: 1 }, { number: 2, arrivesAt: MIN }, { number: 3, arrivesAt: MIN, breaks: true }, { number: 4, arrivesAt: MIN }];
  const record = run(tinyWorkload(prs), new BorsStrategy());
  // [1] passes; [2,3,4] fails; [2,3] fails; [2] passes; [3] fails; [4] passes.
  expect(outcomes(record)).toEqual({ 1: 'merged@30', 2: 'merged@120', 3: 'ejected@150', 4: 'merged@180' });
  expect(record.runsStarted).toBe(6);
  expect(record.maxConcurrentRuns).toBe(1);
});

test('GitHub merge queue: each entry built on everything ahead; a failure is ejected and the builds behind it rebuilt', () => {
  const record = run(tinyWorkload([{ number: 1 }, { number: 2, breaks: true }, { number: 3 }, { number: 4 }, { number: 5 }]), new GithubMergeQueueStrategy(4));
  // Builds [1] [1,2] [1,2,3] [1,2,3,4]; 1 merges, 2 is ejected, then [3] [3,4] [3,4,5] pass and merge together.
  expect(outcomes(record)).toEqual({ 1: 'merged@30', 2: 'ejected@30', 3: 'merged@60', 4: 'merged@60', 5: 'merged@60' });
  expect(record.runsStarted).toBe(7);
  expect(record.maxConcurrentRuns).toBe(4);
});

test('GitHub merge queue: a merge conflict ejects the later PR at once', () => {
  const record = run(tinyWorkload([{ number: 1 }, { number: 2 }, { number: 3, arrivesAt: MIN }], {}, [[1, 3]]), new GithubMergeQueueStrategy(4));
  expect(outcomes(record)).toEqual({ 1: 'merged@30', 2: 'merged@30', 3: 'ejected@2' });
});

test('oracle: never tests a breaking or conflicting PR; waiting PRs share one run', () => {
  const prs = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((number) => ({ number, breaks: number === 2 }));
  const record = run(tinyWorkload(prs, {}, [[4, 9]]), new OracleStrategy([[4, 9]], 4));
  // Four slots take 1, 3, 4, 5 one by one; 6, 7, 8 wait and share the next run.
  expect(outcomes(record)).toEqual({
    1: 'merged@30', 2: 'ejected@0', 3: 'merged@30', 4: 'merged@30', 5: 'merged@30', 6: 'merged@60', 7: 'merged@60', 8: 'merged@60', 9: 'ejected@0',
  });
  expect(record.runsStarted).toBe(5);
});

test('oracle with lanes: a lane merges without waiting for another lane', () => {
  const prs = [1, 2, 3, 4, 5].map((number) => ({ number, targets: [number % 2 === 0 ? 'even' : 'odd'] }));
  const record = run(tinyWorkload(prs), new OracleStrategy([], 4, true));
  expect(Object.values(outcomes(record)).every((o) => o.startsWith('merged'))).toBe(true);
  expect(record.violations).toEqual([]);
});
