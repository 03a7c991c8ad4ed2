/** Where a submitted pull request stands in its queue (the seed's PR states). */
export const PULL_REQUEST_STATES = [
  'NOT_READY',
  'PENDING',
  'TESTING',
  'TESTS_PASSED',
  'PENDING_FAILURE',
  'MERGED',
  'FAILED',
  'CANCELLED',
] as const;
export type PullRequestState = (typeof PULL_REQUEST_STATES)[number];

/** States a pull request never leaves, except by being submitted again. */
export const TERMINAL_STATES: readonly PullRequestState[] = ['MERGED', 'FAILED', 'CANCELLED'];

/** States of an entry that still occupies the queue ("enqueued"). */
export const ENQUEUED_STATES: readonly PullRequestState[] = PULL_REQUEST_STATES.filter(
  (s) => !TERMINAL_STATES.includes(s),
);

export function isTerminal(state: PullRequestState): boolean {
  return TERMINAL_STATES.includes(state);
}

/**
 * Machine-readable reasons recorded with every state change (the timeline).
 * The engine and the GitHub host add to this list; clients match on the strings.
 */
export const STATE_CHANGE_REASONS = [
  'submitted',
  'resubmitted',
  'user_requested',
  'restart_requested',
  'awaiting_git_host',
  'ready',
  'pushed_to',
  'closed',
  'base_changed',
  'converted_to_draft',
  'merged_outside_queue',
  'failed_tests',
  'merge_conflict',
  'merge_refused',
  'timed_out',
  'tests_passed',
  'merged',
  'preempted',
  'test_started',
  'rebuilt',
  'base_moved',
  'not_mergeable',
  'bisecting',
  'proven_by_later_run',
  'retried',
] as const;
export type StateChangeReason = (typeof STATE_CHANGE_REASONS)[number];
