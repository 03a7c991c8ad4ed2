import type { CiOutcome } from '../ci-model.js';
import type { MergeResult, SimHost, Strategy } from '../strategy.js';
import type { SimPr } from '../workload.js';

interface Check {
  runId: string;
  status: 'running' | 'passed' | 'failed';
}

/** A batch, or a part of a failed one: tested on the branch plus every group ahead of it. */
interface Group {
  prs: number[];
  check: Check | null;
}

/** Cuts `prs` into `n` consecutive parts as even as possible, the larger ones first. */
function cut(prs: readonly number[], n: number): number[][] {
  const parts: number[][] = [];
  for (let i = 0, from = 0; i < n; i++) {
    const size = Math.ceil((prs.length - from) / (n - i));
    parts.push(prs.slice(from, from + size));
    from += size;
  }
  return parts;
}

/**
 * Mergify's merge queue with batches and parallel checks (docs.mergify.com:
 * merge-queue/batches, "Handling Batch Failure"; merge-queue/parallel-checks).
 * Up to `max_parallel_checks` (here the CI capacity) batches of up to
 * `batch_size` PRs (4 here: a setting, not Mergify's default) are checked at
 * once, each stacked on the branch plus the batches ahead; a batch starts with
 * whatever is waiting as soon as a slot frees (batch_max_wait_time 0). Batches
 * merge in order as they pass. When a batch fails, the batches behind it are
 * cancelled and go back to the queue, and the failed batch is cut into
 * `max_parallel_checks` parts (at least two: "by default, the batch is split
 * into two") tested at once, each on top of the parts before it. The last PR is never retested: the failed
 * run already tested it on everything before it, so it is the culprit if every
 * part ahead passes. A failing part is cut again, the parts behind it go back
 * to the queue, until a PR that failed alone on the branch is removed.
 * batch_max_failure_resolution_attempts is left unlimited, its default. A
 * merge conflict removes the PR at once and requeues its group and the ones
 * behind it.
 */
export class MergifyStrategy implements Strategy {
  readonly name = 'mergify';
  readonly usesLanes = false;
  readonly seesFlakes = true;
  private host!: SimHost;
  private waiting: number[] = [];
  /** Unmerged groups, front first; the front one's merge may be in flight. */
  private chain: Group[] = [];
  private merging = false;

  constructor(
    private readonly capacity: number,
    private readonly batchSize = 4,
    private readonly maxParallelChecks = capacity,
  ) {}

  start(host: SimHost): void {
    this.host = host;
  }

  onArrival(pr: SimPr): void {
    this.waiting.push(pr.number);
    this.process();
  }

  onRunFinished(runId: string, outcome: CiOutcome): void {
    const at = this.chain.findIndex((g) => g.check?.runId === runId);
    const group = this.chain[at];
    if (!group?.check) return;
    if (outcome.kind === 'passed') {
      group.check.status = 'passed';
    } else if (outcome.kind === 'conflict') {
      // The PR that does not apply is in this group or one ahead: it leaves, the rest from its group on are requeued.
      // Always found: merged PRs come first in a run and passed together, so a conflict names a later one.
      const from = this.chain.findIndex((g) => g.prs.includes(outcome.prNumber));
      this.requeueFrom(from >= 0 ? from : at, outcome.prNumber);
      this.host.eject(outcome.prNumber, 'merge_conflict');
    } else {
      group.check.status = 'failed';
      this.requeueFrom(at + 1);
      if (group.prs.length > 1) this.chain.splice(at, 1, ...this.split(group));
    }
    this.process();
  }

  onMergeFinished(result: MergeResult): void {
    this.merging = false;
    if (result.ok) this.chain.shift();
    this.process();
  }

  onTimer(): void {}

  private process(): void {
    for (let head = this.chain[0]; head && !this.merging; head = this.chain[0]) {
      if (head.check?.status === 'passed') {
        this.merging = true;
        this.host.merge({ runId: head.check.runId, expectedBaseSha: this.host.baseSha, prs: head.prs });
      } else if (head.check?.status === 'failed') {
        // Only a single PR stays failed (larger groups are split at once): it failed alone on the branch.
        this.chain.shift();
        this.host.eject(head.prs[0] as number, 'failed_tests');
      } else {
        break;
      }
    }
    // Parts of a split batch first, in order: they are ahead of anything new.
    this.chain.forEach((group, i) => {
      if (!group.check && this.running() < this.capacity) this.startCheck(i);
    });
    // Nothing new is stacked on a failed group: it would fail too.
    while (this.waiting.length > 0 && this.chain.length < this.maxParallelChecks && this.running() < this.capacity && !this.chain.some((g) => g.check?.status === 'failed')) {
      this.chain.push({ prs: this.waiting.splice(0, this.batchSize), check: null });
      this.startCheck(this.chain.length - 1);
    }
  }

  /**
   * The parts of a failed group, each to be tested on the parts before it. The
   * last PR alone keeps the failed check: its content is exactly what failed.
   */
  private split(group: Group): Group[] {
    // Two parts at least; more parallel checks, more parts.
    const parts = cut(group.prs, Math.min(Math.max(2, this.maxParallelChecks), group.prs.length));
    const last = parts.pop() as number[];
    if (last.length > 1) parts.push(last.slice(0, -1));
    return [...parts.map((prs) => ({ prs, check: null })), { prs: last.slice(-1), check: group.check }];
  }

  private startCheck(i: number): void {
    const group = this.chain[i] as Group;
    // The host's branch holds every group merged so far: it moves only when our merges land.
    const prs = this.chain.slice(0, i + 1).flatMap((g) => g.prs);
    group.check = { runId: this.host.startRun(this.host.baseSha, prs), status: 'running' };
  }

  /** Cancels the groups from `from` on and puts their PRs back at the front of the queue, but `except`. */
  private requeueFrom(from: number, except?: number): void {
    const groups = this.chain.splice(from);
    for (const g of groups) if (g.check?.status === 'running') this.host.cancelRun(g.check.runId);
    this.waiting.unshift(...groups.flatMap((g) => g.prs).filter((pr) => pr !== except));
  }

  private running(): number {
    return this.chain.filter((g) => g.check?.status === 'running').length;
  }
}
