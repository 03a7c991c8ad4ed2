import type { CiOutcome } from './ci-model.js';
import type { SimPr } from './workload.js';

/** Asks the host to advance the branch from `expectedBaseSha` by applying `prs` in order. */
export interface MergeRequest {
  /** The passed run whose content this merge produces (lets lane strategies be checked by lane). */
  runId: string;
  expectedBaseSha: string;
  prs: number[];
}

export type MergeResult = { runId: string; ok: true; newBaseSha: string } | { runId: string; ok: false; reason: 'base_moved' };

/**
 * What a strategy may do to the simulated world. Everything it asks for
 * happens later on the virtual clock and comes back as a callback; nothing
 * calls the strategy back from inside these methods.
 */
export interface SimHost {
  /** Virtual time, ms. */
  readonly now: number;
  /** Head of the target branch. */
  readonly baseSha: string;
  /** Starts a CI run of `prs` applied in order on `baseSha`; returns its id. */
  startRun(baseSha: string, prs: readonly number[]): string;
  /**
   * Direct merge: when `pr` is up to date with `baseSha` (the branch has not
   * moved since the PR arrived) and its own CI passed there, a run that spends no
   * CI and passes at once (its id); null when either does not hold.
   */
  runWithoutCi(baseSha: string, pr: number): string | null;
  /** Stops a run; its result never arrives, the CI time it used still counts. */
  cancelRun(runId: string): void;
  merge(request: MergeRequest): void;
  /** Calls onTimer at this time. */
  wakeAt(at: number): void;
  /** The strategy gives up on a PR for good. */
  eject(prNumber: number, reason: string): void;
}

/**
 * A merge queue design, driven by the simulator. Each strategy is one
 * object per simulation run and keeps its own state.
 */
export interface Strategy {
  readonly name: string;
  /** Tests PRs of disjoint targets apart, merging a lane's tested content onto whatever the other lanes merged. */
  readonly usesLanes: boolean;
  /** Whether its CI sees spurious failures (the oracle knows them and is spared). */
  readonly seesFlakes: boolean;
  start(host: SimHost): void;
  onArrival(pr: SimPr): void;
  onRunFinished(runId: string, outcome: CiOutcome): void;
  onMergeFinished(result: MergeResult): void;
  onTimer(): void;
}
