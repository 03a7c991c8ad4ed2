import type { CiOutcome } from '../ci-model.js';
import type { MergeResult, SimHost, Strategy } from '../strategy.js';
import type { SimPr } from '../workload.js';

/**
 * bors-ng: one run at a time, testing everything waiting as one batch on the
 * tip. A failed batch is split in halves, tested one after the other before
 * anything new, recursively, until the culprit is alone and ejected. New PRs
 * wait for the next batch.
 */
export class BorsStrategy implements Strategy {
  readonly name = 'bors-ng';
  readonly usesLanes = false;
  readonly seesFlakes = true;
  private host!: SimHost;
  private waiting: number[] = [];
  /** Halves of failed batches, tested before new PRs. */
  private readonly bisections: number[][] = [];
  private current: { batch: number[]; runId: string } | null = null;
  private merging = false;

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
      this.merging = true;
      this.host.merge({ runId, expectedBaseSha: this.host.baseSha, prs: current.batch });
      return;
    }
    this.current = null;
    if (outcome.kind === 'conflict') {
      // The PR that would not apply is named: eject it and retry the rest at once.
      this.host.eject(outcome.prNumber, 'merge_conflict');
      const rest = current.batch.filter((n) => n !== outcome.prNumber);
      if (rest.length > 0) this.bisections.unshift(rest);
    } else if (current.batch.length === 1) {
      this.host.eject(current.batch[0] as number, 'failed_tests');
    } else {
      const half = Math.ceil(current.batch.length / 2);
      this.bisections.unshift(current.batch.slice(0, half), current.batch.slice(half));
    }
    this.next();
  }

  onMergeFinished(_result: MergeResult): void {
    this.merging = false;
    this.current = null;
    this.next();
  }

  onTimer(): void {}

  private next(): void {
    if (this.current || this.merging) return;
    let batch = this.bisections.shift();
    if (!batch) {
      batch = this.waiting;
      this.waiting = [];
    }
    if (batch.length === 0) return;
    this.current = { batch, runId: this.host.startRun(this.host.baseSha, batch) };
  }
}
