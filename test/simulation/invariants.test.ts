import type { CiOutcome } from '../../src/simulation/ci-model.js';
import { simulate } from '../../src/simulation/simulator.js';
import type { MergeResult, SimHost, Strategy } from '../../src/simulation/strategy.js';
import type { SimPr } from '../../src/simulation/workload.js';
import { tinyWorkload } from './tiny-workload.js';

/** Deliberately broken: tests each PR alone on the base it arrived on, then merges it onto whatever the branch is by then. */
class StaleBaseStrategy implements Strategy {
  readonly name = 'stale-base';
  readonly usesLanes = false;
  readonly seesFlakes = true;
  private host!: SimHost;
  private readonly runs = new Map<string, number>();
  private merging = false;
  private readonly ready: Array<[string, number]> = [];
  start(host: SimHost) {
    this.host = host;
  }
  onArrival(pr: SimPr) {
    this.runs.set(this.host.startRun(this.host.baseSha, [pr.number]), pr.number);
  }
  onRunFinished(runId: string, outcome: CiOutcome) {
    if (outcome.kind === 'passed') this.ready.push([runId, this.runs.get(runId) as number]);
    this.next();
  }
  onMergeFinished(_result: MergeResult) {
    this.merging = false;
    this.next();
  }
  onTimer() {}
  private next() {
    if (this.merging) return;
    const item = this.ready.shift();
    if (!item) return;
    this.merging = true;
    this.host.merge({ runId: item[0], expectedBaseSha: this.host.baseSha, prs: [item[1]] });
  }
}

/** Deliberately broken: merges every PR the moment it arrives, untested. */
class YoloStrategy implements Strategy {
  readonly name = 'yolo';
  readonly usesLanes = false;
  readonly seesFlakes = true;
  private host!: SimHost;
  start(host: SimHost) {
    this.host = host;
  }
  onArrival(pr: SimPr) {
    this.host.merge({ runId: 'none', expectedBaseSha: this.host.baseSha, prs: [pr.number] });
  }
  onRunFinished() {}
  onMergeFinished() {}
  onTimer() {}
}

test('merging content that was never tested as exactly that content is caught', () => {
  const workload = tinyWorkload([{ number: 1 }, { number: 2 }]);
  const record = simulate(workload, new StaleBaseStrategy(), { seed: 1, capacity: 4 });
  // PR 1 was tested on s0 and merged onto s0: fine. PR 2 was tested on s0 but merged onto s1.
  expect(record.violations).toEqual(['merged untested content: +[2] via run2']);
  expect(record.brokenMerges).toBe(0);
});

test('untested merges of breaking and conflicting PRs count as broken merges', () => {
  const workload = tinyWorkload([{ number: 1, breaks: true }, { number: 2, arrivesAt: 60_000 }, { number: 3, arrivesAt: 120_000 }], {}, [[2, 3]]);
  const record = simulate(workload, new YoloStrategy(), { seed: 1, capacity: 4 });
  expect(record.violations).toHaveLength(3);
  expect(record.brokenMerges).toBe(2);
});

test('a lane strategy may merge its lane onto other lanes, but not onto a changed lane', () => {
  const lanes = Object.assign(new StaleBaseStrategy(), { usesLanes: true });
  const otherLane = tinyWorkload([{ number: 1, targets: ['a'] }, { number: 2, targets: ['b'] }]);
  expect(simulate(otherLane, lanes, { seed: 1, capacity: 4 }).violations).toEqual([]);
  const sameLane = tinyWorkload([{ number: 1, targets: ['a'] }, { number: 2, targets: ['a', 'b'] }]);
  expect(simulate(sameLane, Object.assign(new StaleBaseStrategy(), { usesLanes: true }), { seed: 1, capacity: 4 }).violations).toHaveLength(1);
});

test('running more CI runs at once than the capacity is caught', () => {
  const workload = tinyWorkload([1, 2, 3].map((number) => ({ number })));
  const record = simulate(workload, new StaleBaseStrategy(), { seed: 1, capacity: 2 });
  expect(record.maxConcurrentRuns).toBe(3);
  expect(record.violations[0]).toBe('3 runs at once (capacity 2)');
});
