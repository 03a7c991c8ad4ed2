import { DEFAULT_AUTHOR_POOL, drawAuthor, type AuthorPool } from './authors.js';
import { drawChangedFiles } from './pr-size.js';
import { deriveRng } from './random.js';
import { DEFAULT_RISK_SEPARATION, riskHint } from './risk-hint.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

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
  /** A predictor's calibrated probability that it breaks, from what the service knows before testing it. */
  riskHint: number;
  /** Who wrote it: some authors break the build more often than others (authors.ts). */
  author: string;
  /** How many files it changes: breaking PRs are bigger (pr-size.ts). */
  changedFiles: number;
}

/** A daily cycle: `share` of each day's PRs arrive in the first `hours` of the day (a morning rush). */
export interface MorningBurst {
  hours: number;
  share: number;
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
  /** Mean arrival rate of a Poisson stream (over whole days, when arrivals follow a morning burst). */
  arrivalsPerHour: number;
  /** Absent: arrivals are even over the day. */
  morningBurst?: MorningBurst;
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
  /** How well risk hints separate breaking PRs, in standard deviations of their signal (default 1.5). */
  riskSeparation?: number;
  /** Who writes the PRs (default DEFAULT_AUTHOR_POOL). */
  authors?: AuthorPool;
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
  // Hints draw from their own stream: the PRs, breakage and conflicts stay those of a stream without hints.
  const risk = deriveRng(seed, `risk:${spec.name}`);
  const separation = spec.riskSeparation ?? DEFAULT_RISK_SEPARATION;
  // Authors too: drawn after breakage, from a stream of their own.
  const authorRng = deriveRng(seed, `authors:${spec.name}`);
  const authors = spec.authors ?? DEFAULT_AUTHOR_POOL;
  // Sizes too, so every stream before them stays as it was.
  const sizeRng = deriveRng(seed, `sizes:${spec.name}`);
  let at = 0;
  for (let n = 1; n <= spec.prCount; n++) {
    // The first PR arrives at time 0, so makespans start from the stream's start.
    if (n > 1) at += rng.exponential(HOUR / spec.arrivalsPerHour);
    const group = rng.int(spec.targetGroups);
    const breaks = rng.chance(spec.breakRate);
    const arrivesAt = Math.round(spec.morningBurst ? burstClock(at, spec.morningBurst) : at);
    const hint = riskHint(breaks, spec.breakRate, separation, risk);
    const author = drawAuthor(breaks, spec.breakRate, authors, authorRng);
    const changedFiles = drawChangedFiles(breaks, sizeRng);
    const pr: SimPr = { number: n, arrivesAt, breaks, flakyRate: 0, targets: [`group-${group}`], riskHint: hint, author, changedFiles };
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

/**
 * A non-homogeneous Poisson process by time change: arrivals drawn at the
 * even mean rate are moved so that the burst's share of each day's even time
 * lands in the morning window and the rest spreads over the other hours.
 * Every day keeps the same mean count, so the daily rate is the spec's.
 */
export function burstClock(evenAt: number, burst: MorningBurst): number {
  const day = Math.floor(evenAt / DAY);
  const into = evenAt - day * DAY;
  const window = burst.hours * HOUR;
  const morning = burst.share * DAY;
  const clock = into < morning ? (into * window) / morning : window + ((into - morning) * (DAY - window)) / (DAY - morning);
  return day * DAY + clock;
}

/** Whether two PRs can affect each other's build: their targets overlap. */
export function interacts(a: SimPr, b: SimPr): boolean {
  if (a.targets === 'ALL' || b.targets === 'ALL') return true;
  const set = new Set(a.targets);
  return b.targets.some((t) => set.has(t));
}
