import nock from 'nock';
import type { MergeRequest } from '../../src/ports/git-host.js';
import { API, REPO, REPO_PATH, pullRequestJson, requestLog, testHost, testRunRecord, useNock } from './github-fixtures.js';

useNock();

const BASE = 'f95f852bd8fca8fcc58a9a2d6c842781e32a215e';
const HEAD2 = 'ec26c3e57ca3a959ca5aad62de7213c562f8c821';
const HEAD3 = '3333333333333333333333333333333333333333';

function request(change: Partial<MergeRequest> = {}): MergeRequest {
  return {
    repo: REPO,
    targetBranch: 'main',
    runId: 'run1',
    expectedBaseSha: BASE,
    heads: [
      { prNumber: 2, headSha: HEAD2 },
      { prNumber: 3, headSha: HEAD3 },
    ],
    mergeMethod: 'merge_commit',
    ...change,
  };
}

/** A PR of this queue (the example's base is `master`). */
const pr = (number: number, headSha: string, change: Record<string, unknown> = {}) => pullRequestJson({ number, headSha, base: 'main', ...change });
const runs = () => [testRunRecord({ status: 'succeeded', testBranchSha: 'tested' })];

/** A batch is re-checked with one list of the open PRs into the branch. */
function headsAsTested(scope = nock(API), open = [pr(2, HEAD2), pr(3, HEAD3)]) {
  return scope.get(`${REPO_PATH}/pulls`).query({ state: 'open', base: 'main', per_page: 100, page: 1 }).reply(200, open);
}
/** The branch read where the queue expects it, then moved (only forward) to the tested commit. */
const fastForward = (scope: nock.Scope) =>
  scope.get(`${REPO_PATH}/git/ref/heads%2Fmain`).reply(200, { object: { sha: BASE } }).patch(`${REPO_PATH}/git/refs/heads%2Fmain`, { sha: 'tested', force: false });

describe('merge (landing the tested commit)', () => {
  test('merge_commit: re-checks every PR, then fast-forwards the branch to the tested commit in one ref update', async () => {
    const { host } = testHost({ runs: runs() });
    const scope = fastForward(headsAsTested()).reply(200, { ref: 'refs/heads/main', object: { sha: 'tested' } });
    const seen = requestLog(scope);
    expect(await host.merge(request())).toEqual({ ok: true, newBaseSha: 'tested' });
    // Three requests for a batch of two: one list, one read of the branch, one ref update.
    expect(seen).toEqual([`GET ${REPO_PATH}/pulls?state=open&base=main&per_page=100&page=1`, `GET ${REPO_PATH}/git/ref/heads/main`, `PATCH ${REPO_PATH}/git/refs/heads/main`]);
    expect(scope.isDone()).toBe(true);
  });

  test('a lone PR is re-checked with one read of it', async () => {
    const { host } = testHost({ runs: runs() });
    const scope = fastForward(nock(API).get(`${REPO_PATH}/pulls/2`).reply(200, pr(2, HEAD2))).reply(200, {});
    expect(await host.merge(request({ heads: [{ prNumber: 2, headSha: HEAD2 }] }))).toEqual({ ok: true, newBaseSha: 'tested' });
    expect(scope.isDone()).toBe(true);
  });

  test('squash: after the fast-forward each PR is closed with a comment naming the commit that landed it', async () => {
    const { host } = testHost({ runs: runs() });
    const scope = fastForward(headsAsTested()).reply(200, {});
    for (const n of [2, 3]) {
      scope
        // Read again before closing: a push while the branch moved would not have landed.
        .get(`${REPO_PATH}/pulls/${n}`)
        .reply(200, pr(n, n === 2 ? HEAD2 : HEAD3))
        .post(`${REPO_PATH}/issues/${n}/comments`, (b: { body: string }) => /squashed, in tested/.test(b.body))
        .reply(201, { id: n })
        .patch(`${REPO_PATH}/pulls/${n}`, { state: 'closed' })
        .reply(200, pr(n, n === 2 ? HEAD2 : HEAD3, { state: 'closed' }));
    }
    expect(await host.merge(request({ mergeMethod: 'squash' }))).toEqual({ ok: true, newBaseSha: 'tested' });
    expect(scope.isDone()).toBe(true);
  });

  test('not a fast-forward (the branch moved outside the queue after it was read): base_moved, nothing landed', async () => {
    const { host } = testHost({ runs: runs() });
    fastForward(headsAsTested())
      .reply(422, { message: 'Update is not a fast forward' })
      // Not on top of this very landing (an earlier attempt's): the branch does not hold the tested commit.
      .get(`${REPO_PATH}/git/ref/heads%2Fmain`)
      .reply(200, { object: { sha: 'moved' } })
      .get(`${REPO_PATH}/compare/tested...moved`)
      .query({ per_page: 1 })
      .reply(200, { status: 'diverged', ahead_by: 1, behind_by: 2 })
      // Nor was it landed on a moved base by an earlier attempt (no landing branch).
      .get(`${REPO_PATH}/git/ref/heads%2Fmq-landing%2Fmain%2Frun1`)
      .reply(404, { message: 'Not Found' })
      // And the branch is not where the queue expects it: nothing is built on it.
      .get(`${REPO_PATH}/git/ref/heads%2Fmain`)
      .reply(200, { object: { sha: 'moved' } });
    expect(await host.merge(request())).toEqual({ ok: false, reason: 'base_moved' });
  });

  test.each([
    [422, 'Protected branch update failed for refs/heads/main: Changes must be made through a pull request.'],
    [422, 'Required status check "Merge Queue (main)" is expected.'],
    [403, 'Resource not accessible by integration'],
  ])('a refusal no PR caused (%i %s): blocked, with GitHub\'s message and the fix', async (status, message) => {
    const { host } = testHost({ runs: runs() });
    fastForward(headsAsTested()).reply(status, { message });
    const outcome = await host.merge(request());
    expect(outcome).toMatchObject({ ok: false, reason: 'blocked' });
    expect(outcome.ok === false && outcome.reason === 'blocked' && outcome.message).toContain(message);
    expect(outcome.ok === false && outcome.reason === 'blocked' && outcome.message).toMatch(/bypass/);
  });

  test('a PR head changed since it was tested: head_changed, nothing landed', async () => {
    const { host } = testHost({ runs: runs() });
    // Before answering, it makes sure an earlier attempt did not land it (the push came after): the branch does not hold it.
    headsAsTested(nock(API), [pr(2, 'moved'), pr(3, HEAD3)])
      .get(`${REPO_PATH}/git/ref/heads%2Fmain`)
      .reply(200, { object: { sha: BASE } })
      .get(`${REPO_PATH}/compare/tested...${BASE}`)
      .query({ per_page: 1 })
      .reply(200, { status: 'behind', ahead_by: 0, behind_by: 1 })
      .get(`${REPO_PATH}/git/ref/heads%2Fmq-landing%2Fmain%2Frun1`)
      .reply(404, { message: 'Not Found' });
    expect(await host.merge(request())).toEqual({ ok: false, reason: 'head_changed' });
  });

  test('a PR closed since it was tested: pr_closed, nothing landed', async () => {
    const { host } = testHost({ runs: runs() });
    // #2 is not among the open PRs: read alone, it is closed.
    headsAsTested(nock(API), [pr(3, HEAD3)])
      .get(`${REPO_PATH}/pulls/2`)
      .reply(200, pr(2, HEAD2, { state: 'closed' }))
      .get(`${REPO_PATH}/git/ref/heads%2Fmain`)
      .reply(200, { object: { sha: BASE } })
      .get(`${REPO_PATH}/compare/tested...${BASE}`)
      .query({ per_page: 1 })
      .reply(200, { status: 'behind', ahead_by: 0, behind_by: 1 })
      .get(`${REPO_PATH}/git/ref/heads%2Fmq-landing%2Fmain%2Frun1`)
      .reply(404, { message: 'Not Found' });
    expect(await host.merge(request())).toEqual({ ok: false, reason: 'pr_closed' });
  });

  test('asked again after it landed (the PRs are merged, the branch is at the tested commit): ok again, nothing moved twice', async () => {
    const { host } = testHost({ runs: runs() });
    const scope = headsAsTested(nock(API), [])
      .get(`${REPO_PATH}/pulls/2`)
      .reply(200, pr(2, HEAD2, { state: 'closed', merged: true }))
      .get(`${REPO_PATH}/pulls/3`)
      .reply(200, pr(3, HEAD3, { state: 'closed', merged: true }))
      .get(`${REPO_PATH}/git/ref/heads%2Fmain`)
      .reply(200, { object: { sha: 'tested' } });
    expect(await host.merge(request())).toEqual({ ok: true, newBaseSha: 'tested' });
    expect(scope.isDone()).toBe(true);
  });
});

test('squash, asked again after a landing cut short (one PR closed, one not): the one left open is closed now, nothing moves twice', async () => {
  const { host } = testHost({ runs: runs() });
  const scope = headsAsTested(nock(API), [pr(3, HEAD3)])
    .get(`${REPO_PATH}/pulls/2`)
    .reply(200, pr(2, HEAD2, { state: 'closed' }))
    .get(`${REPO_PATH}/git/ref/heads%2Fmain`)
    .reply(200, { object: { sha: 'tested' } })
    // Asked again: whether the attempt cut short commented already (it did not here).
    .get(`${REPO_PATH}/issues/3/comments`)
    .query(true)
    .reply(200, [{ id: 1, body: 'LGTM' }])
    .get(`${REPO_PATH}/pulls/3`)
    .reply(200, pr(3, HEAD3))
    .post(`${REPO_PATH}/issues/3/comments`)
    .reply(201, { id: 3 })
    .patch(`${REPO_PATH}/pulls/3`, { state: 'closed' })
    .reply(200, pr(3, HEAD3, { state: 'closed' }));
  expect(await host.merge(request({ mergeMethod: 'squash' }))).toEqual({ ok: true, newBaseSha: 'tested' });
  expect(scope.isDone()).toBe(true);
});
