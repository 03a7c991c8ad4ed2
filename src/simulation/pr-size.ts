import { standardNormal, type Rng } from './random.js';

/**
 * How many files a simulated PR changes: log-normal around a median of 4,
 * spread so that one PR in six changes 11 or more, and a breaking PR's median
 * 2.5 times as big (10), since bigger changes break more often. How much more
 * differs between repositories; this is an assumption of the benchmark, not a
 * measurement, and the queue learns the real ratio from its own outcomes
 * (src/engine/size-risk.ts).
 */
export const MEDIAN_CHANGED_FILES = 4;
export const BREAKING_SIZE_FACTOR = 2.5;
/** Standard deviation of ln(files). */
const SPREAD = 1;

/** One draw per PR (two uniforms), whatever the outcome, so the stream it comes from stays aligned. */
export function drawChangedFiles(breaks: boolean, rng: Rng): number {
  const median = MEDIAN_CHANGED_FILES * (breaks ? BREAKING_SIZE_FACTOR : 1);
  return Math.max(1, Math.round(median * Math.exp(SPREAD * standardNormal(rng))));
}
