import type { CiOutcome } from '../ci-model.js';
import type { MergeResult, SimHost, Strategy } from '../strategy.js';
import type { SimPr } from '../workload.js';

interface Pipeline {
  runId: string;
  /** Everything it tests, from the root: the MRs the train merged, then every car up to its own. */
  content: string;
  status: 'running' | 'passed';
}

interface Car {
  pr: number;
  pipeline: Pipeline | null;
}

/** "Each merge train can run a maximum of twenty pipelines in parallel" (GitLab docs, merge trains). */
const TRAIN_PIPELINES = 20;

/**
 * GitLab merge trains (docs.gitlab.com, ci/pipelines/merge_trains, "Merge train
 * workflow"): each MR's pipeline tests the target branch plus every MR ahead of
 * it in the train plus itself, all in parallel, for the first twenty cars; here
 * also no more at once than the CI capacity, the rest waiting for a runner in
 * train order. An MR merges when its pipeline passed and every MR ahead merged.
 * When a pipeline fails the MR is dropped from the train at once, whatever is
 * still running ahead of it (so an MR behind a broken one can be dropped too,
 * gitlab-org/gitlab#500693), and every pipeline behind it is cancelled and
 * restarted without it. A merge conflict drops the MR the same way. No batches,
 * no retries.
 */
export class GitlabMergeTrainStrategy implements Strategy {
  readonly name = 'gitlab-train';
  readonly usesLanes = false;
  readonly seesFlakes = true;
  private host!: SimHost;
  private cars: Car[] = [];
  /** The MRs the train merged: the branch's content as far as we are concerned. */
  private readonly tip: number[] = [];
  /** The front car's merge is in flight: it stays in the train until the merge lands. */
  private merging = false;

  constructor(private readonly capacity: number) {}

  start(host: SimHost): void {
    this.host = host;
  }

  onArrival(pr: SimPr): void {
    this.cars.push({ pr: pr.number, pipeline: null });
    this.process();
  }

  onRunFinished(runId: string, outcome: CiOutcome): void {
    const car = this.cars.find((c) => c.pipeline?.runId === runId);
    if (!car?.pipeline) return;
    if (outcome.kind === 'passed') {
      car.pipeline.status = 'passed';
    } else {
      car.pipeline = null;
      // A conflict names the MR that does not apply (this one or one ahead); a failure drops this one.
      this.drop(outcome.kind === 'conflict' ? outcome.prNumber : car.pr, outcome.kind === 'conflict' ? 'merge_conflict' : 'failed_tests');
    }
    this.process();
  }

  onMergeFinished(result: MergeResult): void {
    this.merging = false;
    if (result.ok) this.tip.push((this.cars.shift() as Car).pr);
    this.process();
  }

  onTimer(): void {}

  private process(): void {
    // Pipelines that no longer test what is ahead of their MR are redundant: cancelled, restarted below.
    this.cars.forEach((car, i) => {
      if (car.pipeline && car.pipeline.content !== this.expected(i)) {
        if (car.pipeline.status === 'running') this.host.cancelRun(car.pipeline.runId);
        car.pipeline = null;
      }
    });
    const front = this.cars[0];
    if (!this.merging && front?.pipeline?.status === 'passed') {
      this.merging = true;
      this.host.merge({ runId: front.pipeline.runId, expectedBaseSha: this.host.baseSha, prs: [front.pr] });
    }
    this.cars.slice(0, TRAIN_PIPELINES).forEach((car, i) => {
      if (car.pipeline || this.running() >= this.capacity) return;
      // The host's branch is our tip: it moves only when our merges land.
      const runId = this.host.startRun(this.host.baseSha, this.cars.slice(0, i + 1).map((c) => c.pr));
      car.pipeline = { runId, content: this.expected(i), status: 'running' };
    });
  }

  private running(): number {
    return this.cars.filter((c) => c.pipeline?.status === 'running').length;
  }

  private expected(i: number): string {
    return [...this.tip, ...this.cars.slice(0, i + 1).map((c) => c.pr)].join(',');
  }

  private drop(pr: number, reason: string): void {
    const index = this.cars.findIndex((c) => c.pr === pr);
    // The car being merged passed with everything ahead of it: no later run can name it.
    if (index < 0 || (this.merging && index === 0)) return;
    const [car] = this.cars.splice(index, 1);
    if (car?.pipeline?.status === 'running') this.host.cancelRun(car.pipeline.runId);
    this.host.eject(pr, reason);
  }
}
