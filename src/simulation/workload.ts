import { deriveRng } from './random.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** One pull request of a simulated stream, with the truth about it. */
export interface SimPr {
  number: number;
  /** Virtual time (ms) the PR is submitted to the queue. */
  arrivesAt: number;
  /** Every run that contains it fails: a real bug. */
  breaks: boolean;
  /** Extra probability that a run containing it fails spuriously (a flaky test it touches). */
  flakyRate: number;
  /** Impacted targets; PRs with disjoint targets do not interact. */
  targets: readonly string[] | 'ALL';
}

/** How long a CI run takes: uniform in mean ± jitter. */
export interface CiTiming {
  meanMinutes: number;
  jitterMinutes: number;
}

/** The knobs of a simulated PR stream. */
export interface WorkloadSpec {
  name: string;
  description: string;
  prCount: number;
  /** Mean arrival rate of a Poisson stream. */
  arrivalsPerHour: number;
  /** Fraction of PRs that break the build. */
  breakRate: number;
  /** Probability that any one run fails spuriously (infrastructure, shared flaky tests). */
  runFlakeRate: number;
  ci: CiTiming;
  /** Independent target groups; each PR touches one. 1 = everything interacts. */
  targetGroups: number;
  /** Fraction of PRs that textually conflict with a recent earlier PR of their group. */
  conflictRate: number;
  /** How long the host takes to move the branch. */
  mergeMinutes: number;
}

/** A generated stream: the PRs in arrival order, and the pairs that conflict (earlier, later). */
export interface Workload {
  spec: WorkloadSpec;
  prs: SimPr[];
  conflicts: Array<[number, number]>;
}

/** How many earlier PRs a conflicting PR may collide with: conflicts are between PRs in flight together. */
const CONFLICT_WINDOW = 10;

export function generateWorkload(spec: WorkloadSpec, seed: number): Workload {
  const rng = deriveRng(seed, `workload:${spec.name}`);
  const prs: SimPr[] = [];
  const conflicts: Array<[number, number]> = [];
  let at = 0;
  for (let n = 1; n <= spec.prCount; n++) {
    // The first PR arrives at time 0, so makespans start from the stream's start.
    if (n > 1) at += rng.exponential(HOUR / spec.arrivalsPerHour);
    const group = rng.int(spec.targetGroups);
    const breaks = rng.chance(spec.breakRate);
    const pr: SimPr = { number: n, arrivesAt: Math.round(at), breaks, flakyRate: 0, targets: [`group-${group}`] };
    const conflicting = rng.chance(spec.conflictRate);
    if (conflicting) {
      const partner = prs.slice(-CONFLICT_WINDOW).filter((p) => interacts(p, pr));
      const other = partner[rng.int(partner.length)];
      if (other) conflicts.push([other.number, n]);
    }
    prs.push(pr);
  }
  return { spec, prs, conflicts };
}

/** Whether two PRs can affect each other's build: their targets overlap. */
export function interacts(a: SimPr, b: SimPr): boolean {
  if (a.targets === 'ALL' || b.targets === 'ALL') return true;
  const set = new Set(a.targets);
  return b.targets.some((t) => set.has(t));
}
