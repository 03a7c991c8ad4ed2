import type { CiOutcome } from '../ci-model.js';
import type { MergeResult, SimHost, Strategy } from '../strategy.js';
import type { SimPr } from '../workload.js';

/**
 * The simplest safe queue: one PR at a time, tested on the branch tip,
 * merged if green, ejected if red. One CI run at a time by design.
 */
export class SerialStrategy implements Strategy {
  readonly name = 'serial';
  readonly usesLanes = false;
  readonly seesFlakes = true;
  private host!: SimHost;
  private readonly waiting: number[] = [];
  private current: { pr: number; runId: string | null } | null = null;

  start(host: SimHost): void {
    this.host = host;
  }

  onArrival(pr: SimPr): void {
    this.waiting.push(pr.number);
    this.next();
  }

  onRunFinished(runId: string, outcome: CiOutcome): void {
    const current = this.current;
    if (!current || current.runId !== runId) return;
    if (outcome.kind === 'passed') {
      this.host.merge({ runId, expectedBaseSha: this.host.baseSha, prs: [current.pr] });
      return;
    }
    this.host.eject(current.pr, outcome.kind === 'conflict' ? 'merge_conflict' : 'failed_tests');
    this.current = null;
    this.next();
  }

  onMergeFinished(_result: MergeResult): void {
    this.current = null;
    this.next();
  }

  onTimer(): void {}

  private next(): void {
    if (this.current) return;
    const pr = this.waiting.shift();
    if (pr === undefined) return;
    this.current = { pr, runId: this.host.startRun(this.host.baseSha, [pr]) };
  }
}
