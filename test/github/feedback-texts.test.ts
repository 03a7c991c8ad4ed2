import { PULL_REQUEST_STATES, type PullRequestState, type StateChangeReason } from '../../src/domain/pull-request-state.js';
import type { PullRequestStatusUpdate } from '../../src/ports/git-host.js';
import { checkRunView, commentMarker, ejectionComment, wantsComment, type FeedbackContext } from '../../src/adapters/github/feedback-texts.js';
import { REPO } from './github-fixtures.js';

const REASON_BY_STATE: Record<PullRequestState, StateChangeReason> = {
  NOT_READY: 'not_mergeable',
  PENDING: 'ready',
  TESTING: 'test_started',
  TESTS_PASSED: 'tests_passed',
  PENDING_FAILURE: 'failed_tests',
  MERGED: 'merged',
  FAILED: 'failed_tests',
  CANCELLED: 'pushed_to',
};

function update(state: PullRequestState, change: Partial<PullRequestStatusUpdate> = {}): PullRequestStatusUpdate {
  return {
    repo: REPO,
    targetBranch: 'main',
    prNumber: 2,
    headSha: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821',
    state,
    reason: REASON_BY_STATE[state],
    ...(state === 'MERGED' || state === 'FAILED' || state === 'CANCELLED' ? {} : { position: 3 }),
    testRun: { runId: 'run1', testBranch: 'mq/main/run1', failedChecks: state === 'FAILED' || state === 'PENDING_FAILURE' ? ['ci/build', 'lint [strict]'] : [] },
    statusCheckEnabled: true,
    commentsEnabled: true,
    ...change,
  };
}

const context: FeedbackContext = {
  label: 'merge-queue',
  failingChecks: [{ name: 'ci/build', url: 'https://github.com/Codertocat/Hello-World/runs/128620228' }, { name: 'lint [strict]' }],
};

describe('the check run shown on the PR', () => {
  test('a waiting or testing PR shows its forecast merge time; an ended one never does', () => {
    const estimatedMergeAt = new Date('2026-11-25T10:42:31Z');
    for (const state of ['PENDING', 'TESTING', 'TESTS_PASSED'] as const) {
      expect(checkRunView(update(state, { estimatedMergeAt }), context).summary).toContain('Forecast to merge around 2026-11-25 10:42 UTC.');
    }
    expect(checkRunView(update('PENDING'), context).summary).not.toContain('Forecast');
    expect(checkRunView(update('MERGED', { estimatedMergeAt }), context).summary).not.toContain('Forecast');
  });

  test.each(PULL_REQUEST_STATES)('%s', (state) => {
    const failing = state === 'FAILED' || state === 'PENDING_FAILURE' ? context : { ...context, failingChecks: [] };
    expect(checkRunView(update(state), failing)).toMatchSnapshot();
  });

  test('NOT_READY carries the reason and detail', () => {
    const view = checkRunView(update('NOT_READY', { reason: 'awaiting_git_host', detail: 'mergeable is still being computed' }), context);
    expect(view.summary).toContain('GitHub has not yet said whether it can be merged');
    expect(view.summary).toContain('mergeable is still being computed');
    expect(view.summary).toContain('position 3');
  });

  test('a cancel nobody is to blame for is neutral, others are cancelled', () => {
    expect(checkRunView(update('CANCELLED', { reason: 'user_requested' }), context).conclusion).toBe('neutral');
    expect(checkRunView(update('CANCELLED', { reason: 'merged_outside_queue' }), context).conclusion).toBe('neutral');
    expect(checkRunView(update('CANCELLED', { reason: 'pushed_to' }), context).conclusion).toBe('cancelled');
  });
});

describe('the comment on ejection', () => {
  test('FAILED: why, the failing checks with links, how to re-queue', () => {
    expect(ejectionComment(update('FAILED', { detail: 'ci/build failed' }), context)).toMatchSnapshot();
  });

  test('CANCELLED because of a push', () => {
    expect(ejectionComment(update('CANCELLED'), { label: 'ship-it', failingChecks: [] })).toMatchSnapshot();
  });

  test('only on FAILED, and CANCELLED not asked for by the user, when comments are on', () => {
    expect(wantsComment(update('FAILED'))).toBe(true);
    expect(wantsComment(update('CANCELLED', { reason: 'pushed_to' }))).toBe(true);
    expect(wantsComment(update('CANCELLED', { reason: 'user_requested' }))).toBe(false);
    expect(wantsComment(update('MERGED'))).toBe(false);
    expect(wantsComment(update('FAILED', { commentsEnabled: false }))).toBe(false);
  });

  test('the marker tells one ejection from another', () => {
    expect(commentMarker(update('FAILED'))).toBe(commentMarker(update('FAILED')));
    expect(commentMarker(update('FAILED'))).not.toBe(commentMarker(update('FAILED', { testRun: { runId: 'run2', testBranch: 'mq/main/run2', failedChecks: [] } })));
    expect(commentMarker(update('FAILED'))).not.toBe(commentMarker(update('CANCELLED')));
  });
});
