import type { StateChangeReason } from '../domain/pull-request-state.js';
import type { EngineEntry, EngineState } from './model.js';
import { shrunkFailureRate, withOutcome } from './outcomes.js';
import { observedFailureRate } from './tuning.js';

/**
 * A risk the queue derives itself (issue 12, point 3): a PR without a client
 * hint is as likely to break as its author's recent PRs here were, pulled
 * towards the queue's break rate while the author's record is short. Pure
 * state: replaying the decisions rebuilds the same records.
 */

/** Outcomes kept per author: enough to tell a habit from bad luck, few enough that an old habit fades. */
const OUTCOMES_PER_AUTHOR = 20;
/** Authors remembered; the one whose PR concluded least recently is forgotten first. */
const AUTHORS_KEPT = 200;
/** An author's record is pulled towards the queue's rate as if this many PRs at that rate were in it. */
const QUEUE_PRIOR_WEIGHT = 5;
/** With fewer outcomes an author is not told apart from the queue: one unlucky flake says little. */
const MIN_AUTHOR_OUTCOMES = 3;

/**
 * What a concluded PR says about its author: 1 when its own change broke
 * (failed tests, a conflict), 0 when it merged through the queue; null when
 * it says nothing about the change (cancelled, timed out, refused by the
 * host, merged elsewhere).
 */
export function authorOutcome(state: 'MERGED' | 'FAILED' | 'CANCELLED', reason: StateChangeReason): 0 | 1 | null {
  if (state === 'MERGED') return reason === 'merged' ? 0 : null;
  if (state === 'FAILED') return reason === 'failed_tests' || reason === 'merge_conflict' ? 1 : null;
  return null;
}

/** Adds an outcome to the author's record, which becomes the most recent; the least recent author beyond the bound is forgotten. */
export function recordAuthorOutcome(state: EngineState, author: string, failed: 0 | 1): void {
  const records = state.authorOutcomes ?? [];
  const previous = records.find((r) => r.author === author)?.outcomes ?? [];
  const others = records.filter((r) => r.author !== author);
  state.authorOutcomes = [...others, { author, outcomes: withOutcome(previous, failed, OUTCOMES_PER_AUTHOR) }].slice(-AUTHORS_KEPT);
}

/** The author's chance of breaking the build, or undefined while their record is too short to differ from the queue's. */
export function authorRisk(state: EngineState, author: string): number | undefined {
  const outcomes = state.authorOutcomes?.find((r) => r.author === author)?.outcomes;
  if (!outcomes || outcomes.length < MIN_AUTHOR_OUTCOMES) return undefined;
  return shrunkFailureRate(outcomes, observedFailureRate(state), QUEUE_PRIOR_WEIGHT);
}

/**
 * Gives a PR without a client hint its author's risk, once per attempt: when
 * its facts first name the author. Never again in that attempt, so a
 * prediction a pass has answered (risk.ts) stays answered, and a risk does not
 * move under runs already built on it. Fixed tuning keeps what the client says.
 */
export function assessRisk(state: EngineState, entry: EngineEntry): void {
  const author = entry.facts?.author;
  if (state.config.tuning !== 'adaptive' || entry.risk !== undefined || author === undefined) return;
  const risk = authorRisk(state, author);
  if (risk !== undefined) entry.risk = risk;
}
