import type { MergeMethod, QueueMode } from '../domain/queue-config.js';
import type { PrFacts } from './model.js';

/** Why a PR may not be tested yet. The API shows it as `notReadyReason`. */
export const NOT_READY_REASONS = [
  'unknown_to_host',
  'closed',
  'draft',
  'base_mismatch',
  'not_mergeable',
  'not_rebaseable',
  'awaiting_mergeability',
  'awaiting_checks',
  'awaiting_impacted_targets',
] as const;
export type NotReadyReason = (typeof NOT_READY_REASONS)[number];

/** What admission looks at: the queue's branch and mode, the PR's facts and targets. */
export interface AdmissionFacts {
  targetBranch: string;
  mode: QueueMode;
  /** The queue's method: a PR the host says cannot be rebased waits when the queue rebases. */
  mergeMethod?: MergeMethod;
  facts: PrFacts | null;
  /** The head sha the PR's impacted targets were computed for, if any. */
  targetsSha: string | null;
}

/** Reasons that wait on the host rather than judge the PR: an admitted PR keeps its place and run meanwhile. */
export const HOST_STILL_DECIDING: readonly NotReadyReason[] = ['awaiting_mergeability', 'awaiting_checks'];

/** Null when the PR may be tested; otherwise why not. One rule for the engine and the API. */
export function notReadyReason(input: AdmissionFacts): NotReadyReason | null {
  const { facts } = input;
  if (!facts) return 'unknown_to_host';
  if (!facts.open) return 'closed';
  if (facts.draft) return 'draft';
  if (facts.baseBranch !== input.targetBranch) return 'base_mismatch';
  // Blocked only until required checks of its head report (a re-run, the queue's own check): not a verdict yet.
  if (facts.mergeability === 'not_mergeable') return facts.checksPending ? 'awaiting_checks' : 'not_mergeable';
  // Its commits do not replay cleanly onto the branch (the host says so before any CI is spent).
  if (input.mergeMethod === 'rebase' && facts.rebaseable === false) return 'not_rebaseable';
  if (facts.mergeability !== 'mergeable') return 'awaiting_mergeability';
  if (input.mode === 'parallel' && input.targetsSha !== facts.headSha) return 'awaiting_impacted_targets';
  return null;
}
