import type { EngineState } from './model.js';
import { shrunkFailureRate, withOutcome } from './outcomes.js';
import { observedFailureRate } from './tuning.js';

/**
 * A second fact the queue learns risk from (issue 12, point 3): how many files
 * a PR changes. Bigger changes break more often in most repositories, but by
 * how much is each repository's own, so the queue learns it: it keeps the
 * recent outcomes of PRs of each size class and reads a class's failure share
 * as the risk that size carries. Pure state, like the authors' records.
 */

/** Outcomes kept per class: a class sees many PRs, so a longer record than an author's stays current. */
const OUTCOMES_PER_CLASS = 50;
/** A class's record is pulled towards the queue's rate as if this many PRs at that rate were in it. */
const QUEUE_PRIOR_WEIGHT = 10;
/** With fewer outcomes a class is not told apart from the queue. */
const MIN_CLASS_OUTCOMES = 5;
/** Classes by powers of four: 0-3 files, 4-15, 16-63, 64 or more. */
const SIZE_CLASSES = 4;

export function sizeClass(changedFiles: number): number {
  let rest = Math.max(0, Math.floor(changedFiles));
  let size = 0;
  while (rest >= 4 && size < SIZE_CLASSES - 1) {
    rest = Math.floor(rest / 4);
    size++;
  }
  return size;
}

/** Adds a concluded PR's outcome (authorOutcome) to its size class's record. */
export function recordSizeOutcome(state: EngineState, changedFiles: number, failed: 0 | 1): void {
  const records = state.sizeOutcomes ?? Array.from({ length: SIZE_CLASSES }, () => []);
  const size = sizeClass(changedFiles);
  state.sizeOutcomes = records.map((outcomes, i) => (i === size ? withOutcome(outcomes, failed, OUTCOMES_PER_CLASS) : outcomes));
}

/** The chance a PR of this size breaks the build, or undefined while its class's record is too short. */
export function sizeRisk(state: EngineState, changedFiles: number): number | undefined {
  const outcomes = state.sizeOutcomes?.[sizeClass(changedFiles)];
  if (!outcomes || outcomes.length < MIN_CLASS_OUTCOMES) return undefined;
  return shrunkFailureRate(outcomes, observedFailureRate(state), QUEUE_PRIOR_WEIGHT);
}
