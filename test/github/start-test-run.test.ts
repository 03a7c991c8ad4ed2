import nock from 'nock';
import type { TestRunRequest } from '../../src/ports/git-host.js';
import { API, REPO, REPO_PATH, requestLog, testHost, useNock } from './github-fixtures.js';

useNock();

const BASE = 'f95f852bd8fca8fcc58a9a2d6c842781e32a215e';
const HEAD2 = 'ec26c3e57ca3a959ca5aad62de7213c562f8c821';
const HEAD3 = '3333333333333333333333333333333333333333';

function request(change: Partial<TestRunRequest> = {}): TestRunRequest {
  return {
    queueId: 'q1',
    repo: REPO,
    targetBranch: 'main',
    runId: 'run1',
    baseSha: BASE,
    heads: [
      { prNumber: 2, headSha: HEAD2 },
      { prNumber: 3, headSha: HEAD3 },
    ],
    ...change,
  };
}

const protection = (contexts: string[], checks: string[] = []) => ({
  url: `${API}${REPO_PATH}/branches/main/protection/required_status_checks`,
  strict: false,
  contexts,
  checks: checks.map((context) => ({ context, app_id: 15368 })),
});
const requiredChecksRule = (...contexts: string[]) => ({
  type: 'required_status_checks',
  ruleset_source_type: 'Repository',
  ruleset_source: 'Codertocat/Hello-World',
  ruleset_id: 42,
  parameters: { strict_required_status_checks_policy: false, required_status_checks: contexts.map((context) => ({ context })) },
});
const mergeCommit = (sha: string, parents: string[]) => ({ sha, commit: { message: 'Merge', tree: { sha: `tree-${sha}` } }, parents: parents.map((p) => ({ sha: p })) });

describe('startTestRun', () => {
  test('builds mq/<target>/<run> as base + each head merged in order, with the branch protection checks', async () => {
    const { host } = testHost();
    const scope = nock(API)
      .get(`${REPO_PATH}/branches/main/protection/required_status_checks`)
      .reply(200, protection(['ci/build'], ['ci/test']))
      .get(`${REPO_PATH}/rules/branches/main`)
      .query({ per_page: 100, page: 1 })
      .reply(200, [])
      .post(`${REPO_PATH}/git/refs`, { ref: 'refs/heads/mq/main/run1', sha: BASE })
      .reply(201, { ref: 'refs/heads/mq/main/run1', object: { sha: BASE } })
      .post(`${REPO_PATH}/merges`, { base: 'mq/main/run1', head: HEAD2, commit_message: "Merge #2 into the queue's test of main" })
      .reply(201, mergeCommit('m1', [BASE, HEAD2]))
      .post(`${REPO_PATH}/merges`, { base: 'mq/main/run1', head: HEAD3, commit_message: "Merge #3 into the queue's test of main" })
      .reply(201, mergeCommit('m2', ['m1', HEAD3]));
    const seen = requestLog(scope);

    const started = await host.startTestRun(request());

    expect(started).toEqual({ ok: true, testBranch: 'mq/main/run1', testBranchSha: 'm2', requiredStatuses: ['ci/build', 'ci/test'], requiredStatusesSource: 'branch_protection' });
    expect(seen).toEqual([
      `GET ${REPO_PATH}/branches/main/protection/required_status_checks`,
      `GET ${REPO_PATH}/rules/branches/main?per_page=100&page=1`,
      `POST ${REPO_PATH}/git/refs`,
      `POST ${REPO_PATH}/merges`,
      `POST ${REPO_PATH}/merges`,
    ]);
    expect(scope.isDone()).toBe(true);
  });

  test("the queue's requiredStatuses win: protection is not even read", async () => {
    const { host } = testHost();
    const scope = nock(API)
      .post(`${REPO_PATH}/git/refs`)
      .reply(201, {})
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('m1', [BASE, HEAD2]));
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }], requiredStatuses: ['e2e', 'e2e'] }));
    expect(started).toMatchObject({ ok: true, testBranchSha: 'm1', requiredStatuses: ['e2e'], requiredStatusesSource: 'queue' });
    expect(scope.isDone()).toBe(true);
  });

  test('branch protection and rulesets together: the union', async () => {
    const { host } = testHost();
    nock(API)
      .get(`${REPO_PATH}/branches/main/protection/required_status_checks`)
      .reply(200, protection(['ci/build']))
      .get(`${REPO_PATH}/rules/branches/main`)
      .query(true)
      .reply(200, [{ type: 'pull_request', parameters: { required_approving_review_count: 1 } }, requiredChecksRule('ci/test', 'ci/build')])
      .post(`${REPO_PATH}/git/refs`)
      .reply(201, {})
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('m1', [BASE, HEAD2]));
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }] }));
    expect(started).toMatchObject({ ok: true, requiredStatuses: ['ci/build', 'ci/test'], requiredStatusesSource: 'branch_protection' });
  });

  test('rulesets alone (the branch is not protected: 404)', async () => {
    const { host } = testHost();
    nock(API)
      .get(`${REPO_PATH}/branches/main/protection/required_status_checks`)
      .reply(404, { message: 'Branch not protected' })
      .get(`${REPO_PATH}/rules/branches/main`)
      .query(true)
      .reply(200, [requiredChecksRule('ci/ruleset')])
      .post(`${REPO_PATH}/git/refs`)
      .reply(201, {})
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('m1', [BASE, HEAD2]));
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }] }));
    expect(started).toMatchObject({ ok: true, requiredStatuses: ['ci/ruleset'], requiredStatusesSource: 'ruleset' });
  });

  test("the queue's own check, required so nobody merges around the queue, is not waited for on test branches", async () => {
    const { host } = testHost();
    nock(API)
      .get(`${REPO_PATH}/branches/main/protection/required_status_checks`)
      .reply(200, protection(['ci/build', 'Merge Queue (main)']))
      .get(`${REPO_PATH}/rules/branches/main`)
      .query(true)
      .reply(200, [requiredChecksRule('Merge Queue (main)')])
      .post(`${REPO_PATH}/git/refs`)
      .reply(201, {})
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('m1', [BASE, HEAD2]));
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }] }));
    expect(started).toMatchObject({ ok: true, requiredStatuses: ['ci/build'], requiredStatusesSource: 'branch_protection' });
  });

  test('no required checks anywhere: refused with a clear reason, and no branch is made', async () => {
    const { host } = testHost();
    const scope = nock(API)
      .get(`${REPO_PATH}/branches/main/protection/required_status_checks`)
      .reply(404, { message: 'Branch not protected' })
      .get(`${REPO_PATH}/rules/branches/main`)
      .query(true)
      .reply(200, [{ type: 'deletion' }]);
    const started = await host.startTestRun(request({ requiredStatuses: [] }));
    expect(started).toEqual({
      ok: false,
      reason: 'no_required_statuses',
      message: "No required status checks are configured for main (branch protection, rulesets or the queue's requiredStatuses); the queue never merges untested code.",
    });
    expect(scope.isDone()).toBe(true);
  });

  test('a conflict fails the PR that does not apply, and the partial branch is deleted', async () => {
    const { host } = testHost();
    const scope = nock(API)
      .post(`${REPO_PATH}/git/refs`)
      .reply(201, {})
      .post(`${REPO_PATH}/merges`, (body: { head: string }) => body.head === HEAD2)
      .reply(201, mergeCommit('m1', [BASE, HEAD2]))
      .post(`${REPO_PATH}/merges`, (body: { head: string }) => body.head === HEAD3)
      .reply(409, { message: 'Merge conflict' })
      .get(`${REPO_PATH}/pulls`)
      .query({ head: 'Codertocat:mq/main/run1', state: 'open' })
      .reply(200, [])
      .delete(`${REPO_PATH}/git/refs/heads%2Fmq%2Fmain%2Frun1`)
      .reply(204);
    const seen = requestLog(scope);
    const started = await host.startTestRun(request({ requiredStatuses: ['ci/build'] }));
    expect(started).toEqual({ ok: false, reason: 'merge_conflict', prNumber: 3 });
    expect(seen.at(-1)).toBe(`DELETE ${REPO_PATH}/git/refs/heads/mq/main/run1`);
    expect(scope.isDone()).toBe(true);
  });

  test('asked again after a complete build: the branch is reused as it is (CI does not start over)', async () => {
    const { host } = testHost();
    const scope = nock(API)
      .post(`${REPO_PATH}/git/refs`)
      .reply(422, { message: 'Reference already exists' })
      .get(`${REPO_PATH}/git/ref/heads%2Fmq%2Fmain%2Frun1`)
      .reply(200, { ref: 'refs/heads/mq/main/run1', object: { sha: 'm2', type: 'commit' } })
      .get(`${REPO_PATH}/git/commits/m2`)
      .reply(200, mergeCommit('m2', ['m1', HEAD3]))
      .get(`${REPO_PATH}/git/commits/m1`)
      .reply(200, mergeCommit('m1', [BASE, HEAD2]));
    const started = await host.startTestRun(request({ requiredStatuses: ['ci/build'] }));
    expect(started).toMatchObject({ ok: true, testBranch: 'mq/main/run1', testBranchSha: 'm2' });
    expect(scope.isDone()).toBe(true);
  });

  test('asked again after a partial build: the branch is reset to the base and built again', async () => {
    const { host } = testHost();
    const scope = nock(API)
      .post(`${REPO_PATH}/git/refs`)
      .reply(422, { message: 'Reference already exists' })
      .get(`${REPO_PATH}/git/ref/heads%2Fmq%2Fmain%2Frun1`)
      .reply(200, { object: { sha: 'm1' } })
      .get(`${REPO_PATH}/git/commits/m1`)
      .reply(200, mergeCommit('m1', [BASE, HEAD2])) // The last head is not in it.
      .patch(`${REPO_PATH}/git/refs/heads%2Fmq%2Fmain%2Frun1`, { sha: BASE, force: true })
      .reply(200, {})
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('n1', [BASE, HEAD2]))
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('n2', ['n1', HEAD3]));
    const started = await host.startTestRun(request({ requiredStatuses: ['ci/build'] }));
    expect(started).toMatchObject({ ok: true, testBranchSha: 'n2' });
    expect(scope.isDone()).toBe(true);
  });

  test('a head already in the branch (204) leaves the tip where it is', async () => {
    const { host } = testHost();
    nock(API)
      .post(`${REPO_PATH}/git/refs`)
      .reply(201, {})
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('m1', [BASE, HEAD2]))
      .post(`${REPO_PATH}/merges`)
      .reply(204);
    expect(await host.startTestRun(request({ requiredStatuses: ['ci/build'] }))).toMatchObject({ ok: true, testBranchSha: 'm1' });
  });

  test('createPullRequest: a draft PR for CI systems that only test PRs', async () => {
    const { host } = testHost();
    const scope = nock(API)
      .post(`${REPO_PATH}/git/refs`)
      .reply(201, {})
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('m1', [BASE, HEAD2]))
      .post(`${REPO_PATH}/pulls`, (body: Record<string, unknown>) => body.title === 'Merge queue test run1' && body.head === 'mq/main/run1' && body.base === 'main' && body.draft === true)
      .reply(201, { number: 99 });
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }], requiredStatuses: ['ci/build'], createPullRequest: true }));
    expect(started).toMatchObject({ ok: true, testBranchSha: 'm1' });
    expect(scope.isDone()).toBe(true);
  });

  test('the draft PR cannot be opened (403): the branch is removed and the failure thrown', async () => {
    const { host } = testHost();
    nock(API)
      .post(`${REPO_PATH}/git/refs`)
      .reply(201, {})
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('m1', [BASE, HEAD2]))
      .post(`${REPO_PATH}/pulls`)
      .reply(403, { message: 'Resource not accessible by integration' })
      .get(`${REPO_PATH}/pulls`)
      .query(true)
      .reply(200, [])
      .delete(`${REPO_PATH}/git/refs/heads%2Fmq%2Fmain%2Frun1`)
      .reply(204);
    await expect(host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }], requiredStatuses: ['ci/build'], createPullRequest: true }))).rejects.toMatchObject({ status: 403 });
  });

  test('a failure while building removes the partial branch and is thrown', async () => {
    const { host } = testHost();
    const scope = nock(API)
      .post(`${REPO_PATH}/git/refs`)
      .reply(201, {})
      .post(`${REPO_PATH}/merges`)
      .reply(404, { message: 'Head does not exist' })
      .get(`${REPO_PATH}/pulls`)
      .query(true)
      .reply(200, [])
      .delete(`${REPO_PATH}/git/refs/heads%2Fmq%2Fmain%2Frun1`)
      .reply(204);
    await expect(host.startTestRun(request({ requiredStatuses: ['ci/build'] }))).rejects.toMatchObject({ status: 404 });
    expect(scope.isDone()).toBe(true);
  });
});
