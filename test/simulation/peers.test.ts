import fc from 'fast-check';
import { metricsOf } from '../../src/simulation/metrics.js';
import type { SimRecord } from '../../src/simulation/sim-record.js';
import { simulate } from '../../src/simulation/simulator.js';
import type { SimHost, Strategy } from '../../src/simulation/strategy.js';
import { GitlabMergeTrainStrategy } from '../../src/simulation/strategies/gitlab-merge-train.js';
import { MergifyStrategy } from '../../src/simulation/strategies/mergify.js';
import { ZuulStrategy } from '../../src/simulation/strategies/zuul.js';
import { generateWorkload, type Workload, type WorkloadSpec } from '../../src/simulation/workload.js';
import { MIN, tinyWorkload } from './tiny-workload.js';

const PEERS: Array<[string, (capacity: number) => Strategy]> = [
  ['mergify', (c) => new MergifyStrategy(c)],
  ['zuul', (c) => new ZuulStrategy(c)],
  ['gitlab-train', (c) => new GitlabMergeTrainStrategy(c)],
];

/** Wraps a strategy and notes every run it starts: the minute, and the PRs applied on the branch. */
class RunLog {
  readonly runs: Array<{ at: number; prs: number[] }> = [];

  wrap(inner: Strategy): Strategy {
    const runs = this.runs;
    return {
      name: inner.name,
      usesLanes: inner.usesLanes,
      seesFlakes: inner.seesFlakes,
      start(host: SimHost) {
        inner.start({
          get now() {
            return host.now;
          },
          get baseSha() {
            return host.baseSha;
          },
          startRun: (baseSha, prs) => {
            runs.push({ at: host.now / MIN, prs: [...prs] });
            return host.startRun(baseSha, prs);
          },
          runWithoutCi: (baseSha, pr) => host.runWithoutCi(baseSha, pr),
          cancelRun: (runId) => host.cancelRun(runId),
          merge: (request) => host.merge(request),
          wakeAt: (at) => host.wakeAt(at),
          eject: (pr, reason) => host.eject(pr, reason),
        });
      },
      onArrival: (pr) => inner.onArrival(pr),
      onRunFinished: (runId, outcome) => inner.onRunFinished(runId, outcome),
      onMergeFinished: (result) => inner.onMergeFinished(result),
      onTimer: () => inner.onTimer(),
    };
  }

  /** The PRs of each run started at `minute`. */
  at(minute: number): number[][] {
    return this.runs.filter((r) => r.at === minute).map((r) => r.prs);
  }
}

/** When each PR merged or was ejected, in minutes: `{1: 'merged@30', 2: 'ejected@60'}`. */
function outcomes(record: SimRecord): Record<number, string> {
  return Object.fromEntries(record.prs.map((p) => [p.number, p.mergedAt !== null ? `merged@${p.mergedAt / MIN}` : p.ejectedAt !== null ? `ejected@${p.ejectedAt / MIN}` : 'stuck']));
}

/** The checks every peer must pass on any workload: safe, live, within capacity, every PR accounted for. */
function checkSafeAndLive(workload: Workload, record: SimRecord, capacity: number): void {
  expect(record.violations).toEqual([]);
  expect(record.brokenMerges).toBe(0);
  expect(metricsOf(record).stuck).toBe(0);
  expect(record.maxConcurrentRuns).toBeLessThanOrEqual(capacity);
  const partners = new Set(workload.conflicts.flat());
  for (const pr of record.prs) {
    if (pr.breaks) expect(pr.mergedAt).toBeNull();
    if (pr.mergedAt === null) expect(pr.ejectReason === 'failed_tests' || (pr.ejectReason === 'merge_conflict' && partners.has(pr.number))).toBe(true);
  }
}

const stream: WorkloadSpec = {
  name: 'peers',
  description: 'a bench-like stream, shorter',
  prCount: 150,
  arrivalsPerHour: 8,
  breakRate: 0.1,
  runFlakeRate: 0.02,
  ci: { meanMinutes: 30, jitterMinutes: 5 },
  targetGroups: 1,
  conflictRate: 0.05,
  mergeMinutes: 0.25,
};

describe.each(PEERS)('%s', (name, make) => {
  test('on a generated stream: no broken merge, nothing stuck, never more runs than the capacity, every PR merged or ejected with a reason', () => {
    const workload = generateWorkload(stream, 1);
    const record = simulate(workload, make(4), { seed: 1, capacity: 4 });
    expect(record.strategy).toBe(name);
    checkSafeAndLive(workload, record, 4);
    expect(record.maxConcurrentRuns).toBe(4);
  });

  test('the same on small random streams and capacities', () => {
    const specArb = fc.record({
      breakRate: fc.constantFrom(0, 0.1, 0.3, 0.6),
      runFlakeRate: fc.constantFrom(0, 0.05, 0.2),
      conflictRate: fc.constantFrom(0, 0.2),
      arrivalsPerHour: fc.constantFrom(2, 8, 30),
      jitterMinutes: fc.constantFrom(0, 10, 25),
    });
    fc.assert(
      fc.property(specArb, fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 1_000_000 }), ({ jitterMinutes, ...over }, capacity, seed) => {
        const workload = generateWorkload({ ...stream, prCount: 30, ci: { meanMinutes: 30, jitterMinutes }, ...over }, seed);
        checkSafeAndLive(workload, simulate(workload, make(capacity), { seed, capacity }), capacity);
      }),
      { numRuns: 80 },
    );
  });
});

test('without flakes or conflicts, Zuul and Mergify merge exactly the PRs that do not break', () => {
  const workload = generateWorkload({ ...stream, runFlakeRate: 0, conflictRate: 0, breakRate: 0.2 }, 2);
  for (const strategy of [new ZuulStrategy(4), new MergifyStrategy(4)]) {
    const record = simulate(workload, strategy, { seed: 2, capacity: 4 });
    expect(record.prs.filter((p) => p.mergedAt !== null).map((p) => p.number)).toEqual(workload.prs.filter((p) => !p.breaks).map((p) => p.number));
  }
});

test('Mergify: a failed batch is cut into parts tested at once, each on the parts before it; the culprit leaves, the rest merges', () => {
  // 1-4 fill the four parallel checks; 5-8 wait and form one batch when a slot frees.
  const prs = [1, 2, 3, 4, 5, 6, 7, 8].map((number) => ({ number, arrivesAt: number > 4 ? MIN : 0, breaks: number === 7 }));
  const log = new RunLog();
  const record = simulate(tinyWorkload(prs), log.wrap(new MergifyStrategy(4)), { seed: 1, capacity: 4 });
  expect(log.at(0)).toEqual([[1], [1, 2], [1, 2, 3], [1, 2, 3, 4]]);
  // Stacked on 2-4, whose merges are landing one after the other.
  expect(log.at(30)).toEqual([[2, 3, 4, 5, 6, 7, 8]]);
  // Four parts at once: 5, 5-6, 5-7; 5-8 is what failed, not retested.
  expect(log.at(60)).toEqual([[5], [5, 6], [5, 6, 7]]);
  // 5-7 failed with 5-6 passing: 7 broke it; 8, behind it, goes back to the queue.
  expect(log.at(90)).toEqual([[8]]);
  expect(outcomes(record)).toMatchObject({ 5: 'merged@90', 6: 'merged@90', 7: 'ejected@90', 8: 'merged@120' });
  expect(record.violations).toEqual([]);
});

test('Mergify: when every part passes, the last PR of the failed batch is the culprit, never tested alone', () => {
  const prs = [1, 2, 3, 4, 5, 6, 7, 8].map((number) => ({ number, arrivesAt: number > 4 ? MIN : 0, breaks: number === 8 }));
  const log = new RunLog();
  const record = simulate(tinyWorkload(prs), log.wrap(new MergifyStrategy(4)), { seed: 1, capacity: 4 });
  expect(log.at(60)).toEqual([[5], [5, 6], [5, 6, 7]]);
  expect(outcomes(record)).toMatchObject({ 5: 'merged@90', 6: 'merged@90', 7: 'merged@90', 8: 'ejected@90' });
  expect(record.runsStarted).toBe(8);
});

test('Zuul: the window halves on each failure down to its floor of 3, and grows by one on each merge', () => {
  const prs = Array.from({ length: 13 }, (_, i) => ({ number: i + 1, breaks: i < 3 }));
  const log = new RunLog();
  const zuul = new ZuulStrategy(8);
  expect(zuul.window).toBe(20);
  const record = simulate(tinyWorkload(prs), log.wrap(zuul), { seed: 1, capacity: 8 });
  // Capacity bounds the first two rounds; then the window does: 10 → 5 → 3 after 1, 2 and 3 fail.
  expect([0, 30, 60, 90].map((minute) => log.at(minute).length)).toEqual([8, 8, 5, 3]);
  expect(outcomes(record)).toMatchObject({ 1: 'ejected@30', 2: 'ejected@60', 3: 'ejected@90', 4: 'merged@120' });
  // Ten merges after the floor.
  expect(zuul.window).toBe(13);
  expect(record.violations).toEqual([]);
});

test('Zuul: items behind a failing one restart without it; it is reported only once everything ahead merged', () => {
  const log = new RunLog();
  const record = simulate(tinyWorkload([{ number: 1 }, { number: 2 }, { number: 3 }, { number: 4 }], {}, [[1, 3]]), log.wrap(new ZuulStrategy(4)), { seed: 1, capacity: 4 });
  // 3 conflicts with 1 a minute in: 4 is re-parented onto 2, but 3 waits for 1 and 2 to merge before it is reported.
  expect(log.at(1)).toEqual([[1, 2, 4]]);
  expect(outcomes(record)).toEqual({ 1: 'merged@30', 2: 'merged@30', 3: 'ejected@30', 4: 'merged@31' });
  expect(record.prs.find((p) => p.number === 3)?.ejectReason).toBe('merge_conflict');
});

test('GitLab merge train: a failed MR is dropped and every pipeline behind it restarts without it', () => {
  const log = new RunLog();
  const record = simulate(tinyWorkload([{ number: 1 }, { number: 2, breaks: true }, { number: 3 }, { number: 4 }, { number: 5 }]), log.wrap(new GitlabMergeTrainStrategy(4)), { seed: 1, capacity: 4 });
  // Five MRs, four runners: 5 waits for one.
  expect(log.at(0)).toEqual([[1], [1, 2], [1, 2, 3], [1, 2, 3, 4]]);
  // 1 passes first and frees a runner for 5; then 2 fails: the pipelines of 3, 4 and 5 restart without it.
  expect(log.at(30)).toEqual([[1, 2, 3, 4, 5], [1, 3], [1, 3, 4], [1, 3, 4, 5]]);
  expect(outcomes(record)).toEqual({ 1: 'merged@30', 2: 'ejected@30', 3: 'merged@60', 4: 'merged@60', 5: 'merged@60' });
  expect(record.runsCancelled).toBe(3);
});

test('GitLab merge train: at most twenty pipelines at once, however large the CI', () => {
  const prs = Array.from({ length: 25 }, (_, i) => ({ number: i + 1 }));
  const record = simulate(tinyWorkload(prs), new GitlabMergeTrainStrategy(100), { seed: 1, capacity: 100 });
  expect(record.maxConcurrentRuns).toBe(20);
  expect(Object.values(outcomes(record)).every((o) => o.startsWith('merged'))).toBe(true);
});
