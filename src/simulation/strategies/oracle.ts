import type { CiOutcome } from '../ci-model.js';
import type { MergeResult, SimHost, Strategy } from '../strategy.js';
import type { SimPr } from '../workload.js';

interface Batch {
  prs: number[];
  runId: string;
  passed: boolean;
}

/**
 * A lower bound, not a product: it knows which PRs break or conflict and
 * never tests them, and its CI never flakes. Every free slot takes all good
 * PRs waiting as one batch, tested on the tip plus the batches still in
 * flight before it, so each PR costs at most one wait for a slot and one run.
 * With lanes it chains batches per target group (one target per PR, as in the
 * benchmark's workloads) and merges each lane apart.
 */
export class OracleStrategy implements Strategy {
  readonly name = 'oracle';
  readonly seesFlakes = false;
  private host!: SimHost;
  private readonly willMerge = new Set<number>();
  private readonly partners = new Map<number, number[]>();
  private waiting: SimPr[] = [];
  /** Unmerged batches, oldest first, per lane. */
  private readonly chains = new Map<string, Batch[]>();
  private running = 0;
  /** The lane and number of batches whose merge is in flight: still on the chain until it lands. */
  private merging: { lane: string; count: number } | null = null;

  constructor(
    conflicts: Iterable<[number, number]> = [],
    private readonly capacity = 4,
    readonly usesLanes = false,
  ) {
    for (const [earlier, later] of conflicts) this.partners.set(later, [...(this.partners.get(later) ?? []), earlier]);
  }

  start(host: SimHost): void {
    this.host = host;
  }

  onArrival(pr: SimPr): void {
    if (pr.breaks) return this.host.eject(pr.number, 'failed_tests');
    // PRs arrive in number order, so whether an earlier partner merges is already known.
    if ((this.partners.get(pr.number) ?? []).some((p) => this.willMerge.has(p))) return this.host.eject(pr.number, 'merge_conflict');
    this.willMerge.add(pr.number);
    this.waiting.push(pr);
    this.process();
  }

  onRunFinished(runId: string, outcome: CiOutcome): void {
    this.running--;
    for (const chain of this.chains.values()) for (const batch of chain) if (batch.runId === runId) batch.passed = outcome.kind === 'passed';
    this.process();
  }

  onMergeFinished(_result: MergeResult): void {
    if (this.merging) this.chains.get(this.merging.lane)?.splice(0, this.merging.count);
    this.merging = null;
    this.process();
  }

  onTimer(): void {}

  private process(): void {
    while (this.running < this.capacity && this.waiting.length > 0) {
      const lane = this.laneOf(this.waiting[0] as SimPr);
      const batch = this.waiting.filter((pr) => this.laneOf(pr) === lane).map((pr) => pr.number);
      this.waiting = this.waiting.filter((pr) => this.laneOf(pr) !== lane);
      const chain = this.chains.get(lane) ?? [];
      this.chains.set(lane, chain);
      const applied = [...chain.flatMap((b) => b.prs), ...batch];
      chain.push({ prs: batch, runId: this.host.startRun(this.host.baseSha, applied), passed: false });
      this.running++;
    }
    if (this.merging) return;
    for (const [lane, chain] of this.chains) {
      const deepest = chain.map((b) => b.passed).lastIndexOf(true);
      if (deepest < 0) continue;
      const batches = chain.slice(0, deepest + 1);
      this.merging = { lane, count: batches.length };
      this.host.merge({ runId: (batches[deepest] as Batch).runId, expectedBaseSha: this.host.baseSha, prs: batches.flatMap((b) => b.prs) });
      return;
    }
  }

  private laneOf(pr: SimPr): string {
    return this.usesLanes && pr.targets !== 'ALL' ? pr.targets.join('+') : 'all';
  }
}
