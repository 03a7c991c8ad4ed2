import type { Rng } from './random.js';
import { MINUTE, type CiTiming, type SimPr } from './workload.js';

/**
 * What CI says about one run. A conflict is found while building the test
 * branch, before any test runs, and names the PR that would not apply.
 */
export type CiOutcome = { kind: 'passed' } | { kind: 'failed'; cause: 'broken' | 'flaky' } | { kind: 'conflict'; prNumber: number };

/** The truth CI judges against: who conflicts with whom, and how flaky runs are. */
export interface CiModel {
  /** Symmetric: PR number → the PRs it textually conflicts with. */
  conflicts: ReadonlyMap<number, ReadonlySet<number>>;
  runFlakeRate: number;
  /** False for the oracle, which knows which failures are spurious and ignores them. */
  flaky: boolean;
}

export function ciModel(conflicts: Iterable<[number, number]>, runFlakeRate: number, flaky = true): CiModel {
  const map = new Map<number, Set<number>>();
  for (const [a, b] of conflicts) {
    if (!map.has(a)) map.set(a, new Set());
    if (!map.has(b)) map.set(b, new Set());
    map.get(a)?.add(b);
    map.get(b)?.add(a);
  }
  return { conflicts: map, runFlakeRate, flaky };
}

/**
 * Judges a run's content: the PRs it contains in the order they are applied
 * (those already on its base first). A conflicting pair fails on the later
 * PR; any breaking PR fails the run; otherwise it may still fail spuriously.
 * Exactly one number is drawn per run whatever the outcome, so the stream of
 * draws does not depend on the content.
 */
export function ciOutcome(model: CiModel, content: readonly SimPr[], rng: Rng): CiOutcome {
  const draw = rng.next();
  const seen = new Set<number>();
  for (const pr of content) {
    const partners = model.conflicts.get(pr.number);
    if (partners && [...partners].some((p) => seen.has(p))) return { kind: 'conflict', prNumber: pr.number };
    seen.add(pr.number);
  }
  if (content.some((pr) => pr.breaks)) return { kind: 'failed', cause: 'broken' };
  if (!model.flaky) return { kind: 'passed' };
  const survives = content.reduce((p, pr) => p * (1 - pr.flakyRate), 1 - model.runFlakeRate);
  return draw < 1 - survives ? { kind: 'failed', cause: 'flaky' } : { kind: 'passed' };
}

/** Whether merging this PR onto content holding `present` breaks the branch: it breaks, or it conflicts. */
export function breaksOn(model: CiModel, pr: SimPr, present: ReadonlySet<number>): boolean {
  if (pr.breaks) return true;
  const partners = model.conflicts.get(pr.number);
  return partners !== undefined && [...partners].some((p) => present.has(p));
}

/** How long a run takes, in ms. A conflict fails while the branch is built: a minute. */
export function ciDuration(timing: CiTiming, outcome: CiOutcome, rng: Rng): number {
  const minutes = timing.meanMinutes + rng.uniform(-timing.jitterMinutes, timing.jitterMinutes);
  return Math.round((outcome.kind === 'conflict' ? 1 : Math.max(1, minutes)) * MINUTE);
}
