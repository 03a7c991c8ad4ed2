import type { Rng } from './random.js';

/**
 * Who writes a simulated stream's PRs. Breakage concentrates on a minority of
 * authors, as it does in real repositories: by default a fifth of the authors
 * write a fifth of the PRs but half of the breaking ones (each of them breaks
 * the build four times as often as the others at a 10% break rate).
 */
export interface AuthorPool {
  /** Authors in the stream; each writes as many PRs as the others of their group, on average. */
  count: number;
  /** Share of the authors (and so of the PRs) that break the build more often. */
  carelessShare: number;
  /** Share of the breaking PRs those authors write. */
  carelessBreakShare: number;
}

export const DEFAULT_AUTHOR_POOL: AuthorPool = { count: 40, carelessShare: 0.2, carelessBreakShare: 0.5 };

/** How many of the pool's authors are careless: the first ones (a0, a1, ...). */
export function carelessCount(pool: AuthorPool): number {
  return Math.round(pool.count * pool.carelessShare);
}

export function authorName(index: number): string {
  return `a${index}`;
}

/**
 * The author of a PR whose breakage is already drawn: careless with the
 * probability Bayes gives that group for a breaking (or a sound) PR, so the
 * careless write `carelessShare` of all PRs and `carelessBreakShare` of the
 * breaking ones; then one author of the group, uniformly. Always two draws, so
 * the stream of authors does not depend on the values drawn.
 */
export function drawAuthor(breaks: boolean, breakRate: number, pool: AuthorPool, rng: Rng): string {
  const careless = carelessCount(pool);
  const share = careless / pool.count;
  const ifBreaking = careless === 0 ? 0 : pool.carelessBreakShare;
  // P(careless | sound) so that P(careless) = share; at break rates too high for that, none of the sound PRs.
  const ifSound = breakRate >= 1 ? 0 : Math.min(1, Math.max(0, (share - breakRate * ifBreaking) / (1 - breakRate)));
  const isCareless = rng.chance(breaks ? ifBreaking : ifSound);
  const pick = rng.next();
  return isCareless ? authorName(Math.floor(pick * careless)) : authorName(careless + Math.floor(pick * (pool.count - careless)));
}

/** The careless authors' measured share of a stream's PRs and of its breaking PRs (null without breaking PRs). */
export function carelessShares(prs: ReadonlyArray<{ author: string; breaks: boolean }>, pool: AuthorPool): { prs: number; breaking: number | null } {
  const careless = new Set(Array.from({ length: carelessCount(pool) }, (_, i) => authorName(i)));
  const breaking = prs.filter((p) => p.breaks);
  const share = (list: typeof prs) => list.filter((p) => careless.has(p.author)).length / list.length;
  return { prs: prs.length === 0 ? 0 : share(prs), breaking: breaking.length === 0 ? null : share(breaking) };
}
