import type { StateChangeReason } from '../domain/pull-request-state.js';
import type { EngineEntry, EngineState } from './model.js';
import { shrunkFailureRate, withOutcome } from './outcomes.js';
import { sizeRisk } from './size-risk.js';
import { observedFailureRate } from './tuning.js';

/**
 * A risk the queue derives itself (issue 12, point 3): a PR without a client
 * hint is as likely to break as its author's recent PRs here were, pulled
 * towards the queue's break rate while the author's record is short, and
 * moved again by what PRs of its size did (size-risk.ts); a client's hint is
 * moved by half as much. Pure state: replaying the decisions rebuilds the
 * same records.
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
 * What a concluded PR says about its author (and its size, size-risk.ts): 1 when its own change broke
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

/** Log-odds, kept finite. */
function logit(p: number): number {
  const q = Math.min(1 - 1e-6, Math.max(1e-6, p));
  return Math.log(q / (1 - q));
}

function logistic(logOdds: number): number {
  return 1 / (1 + Math.exp(-logOdds));
}

/**
 * The risk the queue's own records give a PR: its author's, its size's, or
 * both. Each is the queue's rate moved by what one fact says; two facts that
 * are independent given the outcome move it by the sum of their moves in
 * log-odds (naive Bayes), so an author who often breaks things sending a big
 * change is riskier than either fact says alone. Undefined when no record is
 * long enough to tell.
 */
export function derivedRisk(state: EngineState, facts: { author?: string; changedFiles?: number }): number | undefined {
  const said = [facts.author === undefined ? undefined : authorRisk(state, facts.author), facts.changedFiles === undefined ? undefined : sizeRisk(state, facts.changedFiles)].filter(
    (risk): risk is number => risk !== undefined,
  );
  if (said.length <= 1) return said[0];
  const base = logit(observedFailureRate(state));
  return logistic(said.reduce((sum, risk) => sum + logit(risk) - base, base));
}

/**
 * How much of the records' move a client's hint takes, in log-odds. The hint
 * is evidence of its own (the PR's CI, what it touches); the author's and the
 * size's records add to it as naive Bayes would, but at half their weight: a
 * record of 20 or 50 outcomes is a noisy estimate, and a client's predictor may
 * already count some of what they say (its author's habits), which at full
 * weight would be counted twice. Measured with bench/queue-tune-default.ts on
 * seeds 6-105 of (a) and (b) and 6-25 of (c)-(g), never on the reported 1-5,
 * against the hint alone (mean change of p95 time in queue per seed): (a) -9.8 %,
 * (b) -1.6 %, (c) -4.9 %, (d) -21 %, (g) -4.1 %, (e) and (f) within noise.
 * Against this weight on seeds 6-105: 0.35 gave (a) +4.5 % ± 2.1 %, 0.75 gave
 * (a) +1.8 % and (b) +1.6 %, and records allowed only to raise a hint (a)
 * +4.9 %. At full weight, on seeds 6-65: mean p95 (a) 133 and (b) 65 min,
 * against 126 and 61 at half.
 */
const HINT_RECORD_WEIGHT = 0.5;

/**
 * The risk a PR's facts give it, once per attempt, when they first arrive:
 * without a client hint, what its author's and size's records say
 * (derivedRisk); with one, the hint moved by half of what they say
 * (HINT_RECORD_WEIGHT). Never again in that attempt, so a prediction a pass
 * has answered (risk.ts) stays answered, and a risk does not move under runs
 * already built on it. Fixed tuning keeps what the client says.
 */
export function assessRisk(state: EngineState, entry: EngineEntry): void {
  // Assessed already: moved from the hint (or given one without a hint) by the records or by a run.
  if (state.config.tuning !== 'adaptive' || !entry.facts || entry.risk !== entry.hint) return;
  const derived = derivedRisk(state, entry.facts);
  if (derived === undefined) return;
  entry.risk = entry.hint === undefined ? derived : logistic(logit(entry.hint) + HINT_RECORD_WEIGHT * (logit(derived) - logit(observedFailureRate(state))));
}
