import nock from 'nock';
import type { PullRequestStatusUpdate } from '../../src/ports/git-host.js';
import { commentMarker } from '../../src/adapters/github/feedback-texts.js';
import { API, REPO, REPO_PATH, checkRunJson, queueRecord, testHost, testRunRecord, useNock, webhookExample } from './github-fixtures.js';

useNock();

const HEAD = 'ec26c3e57ca3a959ca5aad62de7213c562f8c821';
const CHECK_NAME = 'Merge Queue (main)';

function update(change: Partial<PullRequestStatusUpdate> = {}): PullRequestStatusUpdate {
  return {
    repo: REPO,
    targetBranch: 'main',
    prNumber: 2,
    headSha: HEAD,
    state: 'PENDING',
    reason: 'ready',
    position: 2,
    statusCheckEnabled: true,
    commentsEnabled: true,
    ...change,
  };
}

function existingRuns(...runs: Array<Record<string, unknown>>) {
  return nock(API)
    .get(`${REPO_PATH}/commits/${HEAD}/check-runs`)
    .query({ check_name: CHECK_NAME, filter: 'latest', per_page: 100 })
    .reply(200, { total_count: runs.length, check_runs: runs });
}
/** The PR has no comment of the queue's yet, and one is posted (its body handed to `onPost`). */
function commentPosted(scope: nock.Scope, onPost: (body: string) => void): nock.Scope {
  return scope
    .get(`${REPO_PATH}/issues/2/comments`)
    .query(true)
    .reply(200, [])
    .post(`${REPO_PATH}/issues/2/comments`, (body: { body: string }) => {
      onPost(body.body);
      return true;
    })
    .reply(201, {});
}
const ours = (change: Record<string, unknown> = {}) => checkRunJson({ id: 555, name: CHECK_NAME, external_id: 'mq:main:2', status: 'queued', conclusion: null, ...change });

describe('reportPullRequestStatus', () => {
  test('the first report creates the check run on the PR head', async () => {
    const { host } = testHost();
    const scope = existingRuns(checkRunJson({ id: 9, name: CHECK_NAME, external_id: 'someone-else' }))
      .post(`${REPO_PATH}/check-runs`, {
        name: CHECK_NAME,
        head_sha: HEAD,
        external_id: 'mq:main:2',
        status: 'queued',
        output: { title: 'Queued: position 2', summary: 'Waiting for its turn in the merge queue for `main` at position 2.' },
      })
      .reply(201, ours());
    await host.reportPullRequestStatus(update());
    expect(scope.isDone()).toBe(true);
  });

  test('later reports update the same check run (found by name and external id)', async () => {
    const { host } = testHost();
    const scope = existingRuns(ours({ status: 'in_progress' }))
      .patch(`${REPO_PATH}/check-runs/555`, {
        name: CHECK_NAME,
        external_id: 'mq:main:2',
        status: 'completed',
        conclusion: 'success',
        completed_at: '2024-05-01T12:00:00.000Z',
        output: { title: 'Merged', summary: 'Merged into `main` by the merge queue.' },
      })
      .reply(200, ours({ status: 'completed', conclusion: 'success' }));
    await host.reportPullRequestStatus(update({ state: 'MERGED', reason: 'merged', position: undefined }));
    expect(scope.isDone()).toBe(true);
  });

  test('queued again on the same head after it completed: a new check run (a completed one cannot be reopened)', async () => {
    const { host } = testHost();
    const scope = existingRuns(ours({ status: 'completed', conclusion: 'failure' }))
      .post(`${REPO_PATH}/check-runs`, (body: { status: string }) => body.status === 'queued')
      .reply(201, ours({ id: 556 }));
    await host.reportPullRequestStatus(update());
    expect(scope.isDone()).toBe(true);
  });

  test('FAILED: the check run fails, and one comment says why with links to the failing checks', async () => {
    const { host } = testHost({
      queues: [queueRecord({ config: { enqueueingLabel: 'ship-it' } })],
      runs: [testRunRecord({ status: 'failed', checkRuns: [{ name: 'Octocoders-linter', url: 'https://github.com/Codertocat/Hello-World/runs/128620228', status: 'completed', conclusion: 'failure' }] })],
    });
    const earlier = webhookExample('issue_comment', 'created').comment as Record<string, unknown>;
    let posted = '';
    const scope = existingRuns(ours({ status: 'in_progress' }))
      .patch(`${REPO_PATH}/check-runs/555`, (body: { conclusion: string; output: { summary: string } }) => body.conclusion === 'failure' && body.output.summary.includes('[Octocoders-linter](https://github.com/Codertocat/Hello-World/runs/128620228)'))
      .reply(200, {})
      .get(`${REPO_PATH}/issues/2/comments`)
      .query({ per_page: 100, page: 1 })
      .reply(200, [earlier])
      .post(`${REPO_PATH}/issues/2/comments`, (body: { body: string }) => {
        posted = body.body;
        return true;
      })
      .reply(201, {});
    await host.reportPullRequestStatus(
      update({ state: 'FAILED', reason: 'failed_tests', position: undefined, testRun: { runId: 'run1', testBranch: 'mq/main/run1', failedChecks: ['Octocoders-linter'] } }),
    );
    expect(scope.isDone()).toBe(true);
    expect(posted).toContain('because its tests failed');
    expect(posted).toContain('- [Octocoders-linter](https://github.com/Codertocat/Hello-World/runs/128620228)');
    expect(posted).toContain('add the `ship-it` label again');
  });

  // Found by review: with merge commits GitHub leaves a PR pushed to while it landed open, and nobody said its new
  // commits did not land (squash and rebase landings say so themselves, land-tested-commit.ts).
  test.each([
    ['merge_commit', true],
    ['squash', false],
  ] as const)('merged, pushed to while it landed (%s): the check run says so, and a comment too only for merge commits', async (mergeMethod, comments) => {
    const { host } = testHost({ queues: [queueRecord({ config: { mergeMethod } })] });
    const detail = 'The head the queue tested, ec26c3e, landed; commits pushed to the pull request while it landed did not. Submit it again to land them.';
    let posted = '';
    const checkRun = existingRuns(ours({ status: 'in_progress' }))
      .patch(`${REPO_PATH}/check-runs/555`, (body: { conclusion: string; output: { summary: string } }) => body.conclusion === 'success' && body.output.summary.includes(detail))
      .reply(200, {});
    const scope = comments ? commentPosted(checkRun, (body) => (posted = body)) : checkRun;
    await host.reportPullRequestStatus(update({ state: 'MERGED', reason: 'merged', position: undefined, detail }));
    expect(scope.isDone()).toBe(true);
    if (comments) {
      expect(posted).toContain('landed on `main`');
      expect(posted).toContain(detail);
      expect(posted).toContain('To land the commits pushed since, add the `merge-queue` label again');
    }
  });

  test('the same ejection reported again: no second comment', async () => {
    const { host } = testHost();
    const failed = update({ state: 'CANCELLED', reason: 'pushed_to', position: undefined, statusCheckEnabled: false });
    const scope = nock(API)
      .get(`${REPO_PATH}/issues/2/comments`)
      .query(true)
      .reply(200, [{ id: 1, body: `${commentMarker(failed)}\nremoved` }]);
    await host.reportPullRequestStatus(failed);
    expect(scope.isDone()).toBe(true);
  });

  test('cancelled by the user: the check run only, no comment', async () => {
    const { host } = testHost();
    const scope = existingRuns(ours())
      .patch(`${REPO_PATH}/check-runs/555`, (body: { conclusion: string }) => body.conclusion === 'neutral')
      .reply(200, {});
    await host.reportPullRequestStatus(update({ state: 'CANCELLED', reason: 'user_requested', position: undefined }));
    expect(scope.isDone()).toBe(true);
  });

  test('a time-out names the required checks that never reported on the test commit and says CI must run on mq/**', async () => {
    const { host } = testHost({ runs: [testRunRecord({ status: 'failed', requiredStatuses: ['ci/build', 'ci/lint'] })] });
    let summary = '';
    let posted = '';
    const scope = nock(API)
      .get(`${REPO_PATH}/commits/test1/check-runs`)
      .query(true)
      .reply(200, { total_count: 1, check_runs: [checkRunJson({ id: 7, name: 'ci/lint', status: 'in_progress', conclusion: null })] })
      .get(`${REPO_PATH}/commits/test1/status`)
      .query(true)
      .reply(200, { state: 'pending', statuses: [], sha: 'test1', total_count: 0 });
    commentPosted(
      existingRuns(ours({ status: 'in_progress' }))
        .patch(`${REPO_PATH}/check-runs/555`, (body: { output: { summary: string } }) => {
          summary = body.output.summary;
          return true;
        })
        .reply(200, {}),
      (body) => (posted = body),
    );
    await host.reportPullRequestStatus(update({ state: 'FAILED', reason: 'timed_out', position: undefined, testRun: { runId: 'run1', testBranch: 'mq/main/run1', failedChecks: [] } }));
    expect(scope.isDone()).toBe(true);
    for (const text of [summary, posted]) {
      expect(text).toContain('These required checks never reported on `mq/main/run1`: `ci/build`.');
      expect(text).toContain('make sure your CI runs on pushes to `mq/**`');
    }
  });

  test('status checks and comments off: GitHub is not asked anything', async () => {
    const { host } = testHost();
    await host.reportPullRequestStatus(update({ state: 'FAILED', reason: 'failed_tests', statusCheckEnabled: false, commentsEnabled: false }));
  });
});
