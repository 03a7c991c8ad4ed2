import type { PullRequestState, StateChangeReason } from '../../domain/pull-request-state.js';
import { assertNever } from '../../engine/assert-never.js';
import type { MergeMethod } from '../../domain/queue-config.js';
import type { PullRequestStatusUpdate } from '../../ports/git-host.js';

/**
 * Everything the PR's author reads from the queue on GitHub, as pure
 * functions of the status update, so the wording is snapshot-tested and the
 * API calls stay elsewhere.
 */

/** A failing check, with a link to its page when GitHub gave one. */
export interface FailingCheck {
  name: string;
  url?: string;
}

/** What the texts need besides the update. */
export interface FeedbackContext {
  /** The queue's enqueueing label, for the "how to re-queue" hint. */
  label: string;
  /** The queue's merge method (absent without a queue): a merged PR's comment is the landing's own but for merge commits. */
  mergeMethod?: MergeMethod;
  failingChecks: FailingCheck[];
  /** On a time-out: the required checks that never reported on the test branch's commit. */
  silentChecks?: string[];
}

export function checkRunName(targetBranch: string): string {
  return `Merge Queue (${targetBranch})`;
}

/** One check run per queue and PR: how repeats find and update it. */
export function checkRunExternalId(targetBranch: string, prNumber: number): string {
  return `mq:${targetBranch}:${prNumber}`;
}

/** The check run's fields for a state (GitHub's status/conclusion words). */
export interface CheckRunView {
  status: 'queued' | 'in_progress' | 'completed';
  conclusion?: 'success' | 'failure' | 'cancelled' | 'neutral';
  title: string;
  summary: string;
}

/** Why a PR changed state, as the end of "... because <text>". */
export const REASON_TEXTS: Readonly<Record<StateChangeReason, string>> = {
  submitted: 'it was submitted',
  resubmitted: 'it was submitted again',
  user_requested: 'someone asked for it',
  restart_requested: 'a restart was requested',
  awaiting_git_host: 'GitHub has not yet said whether it can be merged',
  ready: 'it is ready',
  pushed_to: 'new commits were pushed to it',
  closed: 'it was closed',
  base_changed: 'its base branch was changed',
  converted_to_draft: 'it was converted to a draft',
  merged_outside_queue: 'it was merged outside the queue',
  failed_tests: 'its tests failed',
  merge_conflict: 'it conflicts with the target branch or with a pull request ahead of it',
  merge_refused: 'GitHub refused to land it',
  timed_out: 'its tests did not finish in time',
  tests_passed: 'its tests passed',
  merged: 'it was merged',
  preempted: 'a pull request with a higher priority went ahead of it',
  test_started: 'its test started',
  rebuilt: 'its test run was rebuilt',
  base_moved: 'the target branch moved outside the queue',
  not_mergeable: 'GitHub says it cannot be merged (a conflict, or a required review or check is missing)',
  bisecting: 'its batch failed and is being split to find the cause',
  proven_by_later_run: 'a later test run that includes it passed',
  retried: 'its failed test run is run again (retryFailedTests)',
};

/** Leaving the queue for these is nobody's failure, so the check run is neutral rather than cancelled. */
const NEUTRAL_CANCELS: readonly StateChangeReason[] = ['user_requested', 'closed', 'merged_outside_queue'];

export function checkRunView(update: PullRequestStatusUpdate, context: FeedbackContext): CheckRunView {
  const queue = `the merge queue for \`${update.targetBranch}\``;
  const at = update.position ? ` at position ${update.position}` : '';
  const eta = update.estimatedMergeAt ? ` Forecast to merge around ${etaText(update.estimatedMergeAt)}.` : '';
  const detail = update.detail ? `\n\n${update.detail}` : '';
  const failing = failingList(context.failingChecks);
  const state: PullRequestState = update.state;
  switch (state) {
    case 'NOT_READY':
      return { status: 'queued', title: update.position ? `Not ready to test (position ${update.position})` : 'Not ready to test', summary: `In ${queue}${at}, but not ready to be tested: ${REASON_TEXTS[update.reason]}.${detail}` };
    case 'PENDING':
      return { status: 'queued', title: update.position ? `Queued: position ${update.position}` : 'Queued', summary: `Waiting for its turn in ${queue}${at}.${eta}` };
    case 'TESTING':
      return { status: 'in_progress', title: 'Testing', summary: `Being tested in ${queue}${at}, together with the pull requests ahead of it${branch(update)}.${eta}` };
    case 'TESTS_PASSED':
      return { status: 'in_progress', title: 'Tests passed', summary: `Its tests passed in ${queue}; it is merged once the pull requests ahead of it are.${eta}` };
    case 'PENDING_FAILURE':
      return {
        status: 'in_progress',
        title: 'Tests failed, confirming the cause',
        summary: `A test run with this pull request failed in ${queue}; the queue is finding out whether this pull request is the cause before removing it.${failing}`,
      };
    case 'MERGED':
      return { status: 'completed', conclusion: 'success', title: 'Merged', summary: `Merged into \`${update.targetBranch}\` by the merge queue.${detail}` };
    case 'FAILED':
      return {
        status: 'completed',
        conclusion: 'failure',
        title: `Removed: ${REASON_TEXTS[update.reason]}`,
        summary: `Removed from ${queue} because ${REASON_TEXTS[update.reason]}.${detail}${failing}${timeoutExplanation(update, context)}`,
      };
    case 'CANCELLED':
      return {
        status: 'completed',
        conclusion: NEUTRAL_CANCELS.includes(update.reason) ? 'neutral' : 'cancelled',
        title: 'Removed from the queue',
        summary: `Removed from ${queue} because ${REASON_TEXTS[update.reason]}.${detail}`,
      };
    default:
      return assertNever(state);
  }
}

/** An ejection the author did not ask for deserves a comment; their own cancel does not. */
export function wantsComment(update: PullRequestStatusUpdate): boolean {
  return update.commentsEnabled && (update.state === 'FAILED' || (update.state === 'CANCELLED' && update.reason !== 'user_requested'));
}

/**
 * A hidden line naming the event a comment is about, so a repeated report
 * (a replay after a restart) finds its comment instead of posting another.
 */
export function commentMarker(update: PullRequestStatusUpdate): string {
  const key = [update.targetBranch, update.prNumber, update.state, update.reason, update.testRun?.runId ?? '-', update.headSha].join(':');
  return `<!-- merge-queue:${key} -->`;
}

export function ejectionComment(update: PullRequestStatusUpdate, context: FeedbackContext): string {
  const lines = [
    commentMarker(update),
    update.state === 'MERGED'
      ? `**Merge queue:** landed on \`${update.targetBranch}\`.`
      : `**Merge queue:** this pull request was removed from the queue for \`${update.targetBranch}\` because ${REASON_TEXTS[update.reason]}.`,
  ];
  if (update.detail) lines.push('', `> ${update.detail.replace(/\r?\n/g, '\n> ')}`);
  const failing = failingList(context.failingChecks);
  if (failing) lines.push('', failing.trimStart());
  const silent = timeoutExplanation(update, context);
  if (silent) lines.push('', silent.trimStart());
  const again = update.state === 'MERGED' ? 'To land the commits pushed since, add' : 'To queue it again, fix what is needed and push, then add';
  lines.push('', `${again} the \`${context.label}\` label again (remove it first if it is still there) or comment \`/mq merge\`.`);
  return lines.join('\n');
}

function failingList(checks: FailingCheck[]): string {
  if (checks.length === 0) return '';
  const items = checks.map((check) => {
    const name = check.name.replace(/[[\]]/g, '\\$&'); // A bracket in a check's name must not break the link.
    return check.url ? `- [${name}](${check.url})` : `- ${name}`;
  });
  return `\n\nFailing checks:\n${items.join('\n')}`;
}

function branch(update: PullRequestStatusUpdate): string {
  return update.testRun ? ` on \`${update.testRun.testBranch}\`` : '';
}

/**
 * A run that timed out usually means CI never ran on the test branch: name the
 * required checks that never reported and say where CI must run.
 */
function timeoutExplanation(update: PullRequestStatusUpdate, context: FeedbackContext): string {
  if (update.reason !== 'timed_out' || !context.silentChecks || context.silentChecks.length === 0) return '';
  const names = context.silentChecks.map((name) => `\`${name}\``).join(', ');
  const where = update.testRun ? `\`${update.testRun.testBranch}\`` : 'the test branch';
  return `\n\nThese required checks never reported on ${where}: ${names}. The queue tests on branches named \`mq/${update.targetBranch}/<run>\`: make sure your CI runs on pushes to \`mq/**\` (see "Set up your CI" in the merge queue's README).`;
}

/** A forecast time as the check run shows it: minutes, UTC (the reader's zone is unknown). */
function etaText(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
