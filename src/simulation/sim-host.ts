import { breaksOn, ciDuration, ciOutcome, type CiModel, type CiOutcome } from './ci-model.js';
import type { EventQueue } from './event-queue.js';
import type { InvariantChecker } from './invariants.js';
import type { Rng } from './random.js';
import type { PrRecord } from './sim-record.js';
import type { MergeRequest, MergeResult, SimHost } from './strategy.js';
import { MINUTE, type SimPr, type Workload } from './workload.js';

/** What the simulator's clock delivers to a strategy. */
export type SimEvent =
  | { kind: 'arrival'; pr: SimPr }
  | { kind: 'run_finished'; runId: string; outcome: CiOutcome }
  | { kind: 'merge_due'; runId: string }
  | { kind: 'timer' };

/** What the host judges runs and merges by, and where it writes down what happened. */
export interface SimWorld {
  workload: Workload;
  model: CiModel;
  rng: Rng;
  queue: EventQueue<SimEvent>;
  checker: InvariantChecker;
  records: Map<number, PrRecord>;
  prs: ReadonlyMap<number, SimPr>;
  /** CI runs allowed at once. */
  capacity: number;
  /** Check merges lane by lane (the strategy tests independent targets apart). */
  lanes: boolean;
}

interface LiveRun {
  startedAt: number;
  content: number[];
}

/**
 * The simulated repository and CI a strategy acts on: a branch of known
 * content, runs on a bounded CI, merges that take time. It judges every run
 * with the CI model and checks every merge against the invariant.
 */
export class SimulatedHost implements SimHost {
  now = 0;
  baseSha = 's0';
  runsStarted = 0;
  runsCancelled = 0;
  ciMs = 0;
  brokenMerges = 0;
  maxConcurrentRuns = 0;
  private readonly contents = new Map<string, number[]>([['s0', []]]);
  private readonly live = new Map<string, LiveRun>();
  private readonly timers = new Set<number>();
  private readonly pendingMerges = new Map<string, MergeRequest>();
  private nextSha = 1;

  constructor(private readonly world: SimWorld) {}

  startRun(baseSha: string, prs: readonly number[]): string {
    const base = this.contents.get(baseSha);
    if (!base) throw new Error(`run on unknown sha ${baseSha}`);
    const runId = `run${++this.runsStarted}`;
    const content = [...base, ...prs];
    const outcome = ciOutcome(this.world.model, content.map((n) => this.pr(n)), this.world.rng);
    const duration = ciDuration(this.world.workload.spec.ci, outcome, this.world.rng);
    this.live.set(runId, { startedAt: this.now, content });
    if (this.live.size > this.world.capacity) this.world.checker.record(`${this.live.size} runs at once (capacity ${this.world.capacity})`);
    this.maxConcurrentRuns = Math.max(this.maxConcurrentRuns, this.live.size);
    this.world.queue.push(this.now + duration, { kind: 'run_finished', runId, outcome });
    return runId;
  }

  /** The branch head each PR was written against: its author's own CI ran there. */
  private readonly arrivalBase = new Map<number, string>();
  runsWithoutCi = 0;

  arrived(pr: number): void {
    this.arrivalBase.set(pr, this.baseSha);
  }

  runWithoutCi(baseSha: string, pr: number): string | null {
    // A PR that breaks the build failed its own CI; one written before the branch moved is behind.
    if (baseSha !== this.baseSha || this.arrivalBase.get(pr) !== baseSha || this.pr(pr).breaks) return null;
    const base = this.contents.get(baseSha) ?? [];
    const runId = `direct${++this.runsWithoutCi}`;
    this.live.set(runId, { startedAt: this.now, content: [...base, pr] });
    // Finishes now, costing no CI time and no CI slot; the PR's own run passed on exactly this content.
    this.world.queue.push(this.now, { kind: 'run_finished', runId, outcome: { kind: 'passed' } });
    return runId;
  }

  cancelRun(runId: string): void {
    const run = this.live.get(runId);
    if (!run) return; // Already finished: nothing to stop.
    this.live.delete(runId);
    this.runsCancelled++;
    this.ciMs += this.now - run.startedAt;
  }

  /** Called by the simulator when a run's result is due; false if it was cancelled. */
  finishRun(runId: string, outcome: CiOutcome): boolean {
    const run = this.live.get(runId);
    if (!run) return false;
    this.live.delete(runId);
    this.ciMs += this.now - run.startedAt;
    if (outcome.kind === 'passed') this.world.checker.recordPassed(runId, run.content);
    return true;
  }

  merge(request: MergeRequest): void {
    this.pendingMerges.set(request.runId, request);
    this.world.queue.push(this.now + this.world.workload.spec.mergeMinutes * MINUTE, { kind: 'merge_due', runId: request.runId });
  }

  /** Carries out a merge when it is due: the branch moves only if it is where the strategy expected. */
  completeMerge(runId: string): MergeResult {
    const request = this.pendingMerges.get(runId);
    this.pendingMerges.delete(runId);
    if (!request || request.expectedBaseSha !== this.baseSha) return { runId, ok: false, reason: 'base_moved' };
    const base = this.contents.get(this.baseSha) ?? [];
    const next = [...base, ...request.prs];
    this.world.checker.checkMerge(next, request.prs, runId, this.world.lanes);
    const present = new Set(base);
    for (const n of request.prs) {
      const record = this.world.records.get(n);
      if (!record || record.mergedAt !== null || record.ejectedAt !== null) this.world.checker.record(`PR ${n} merged twice or after ejection`);
      if (record) record.mergedAt = this.now;
      if (breaksOn(this.world.model, this.pr(n), present)) this.brokenMerges++;
      present.add(n);
    }
    const sha = `s${this.nextSha++}`;
    this.contents.set(sha, next);
    this.baseSha = sha;
    return { runId, ok: true, newBaseSha: sha };
  }

  wakeAt(at: number): void {
    const when = Math.max(at, this.now);
    if (this.timers.has(when)) return;
    this.timers.add(when);
    this.world.queue.push(when, { kind: 'timer' });
  }

  /** Called by the simulator as a timer fires. */
  timerFired(at: number): void {
    this.timers.delete(at);
  }

  eject(prNumber: number, reason: string): void {
    const record = this.world.records.get(prNumber);
    if (!record || record.mergedAt !== null || record.ejectedAt !== null) {
      this.world.checker.record(`PR ${prNumber} ejected after it merged or was ejected`);
      return;
    }
    record.ejectedAt = this.now;
    record.ejectReason = reason;
  }

  private pr(n: number): SimPr {
    const pr = this.world.prs.get(n);
    if (!pr) throw new Error(`unknown PR ${n}`);
    return pr;
  }
}
