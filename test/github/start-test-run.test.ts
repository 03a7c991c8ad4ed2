import nock from 'nock';
import type { TestRunRequest } from '../../src/ports/git-host.js';
import { isTransientHostError } from '../../src/ports/host-errors.js';
import { StagingMoved } from '../../src/adapters/github/test-branch.js';
import { API, REPO, REPO_PATH, checkRunJson, pullRequestJson, requestLog, testHost, testRunRecord, useNock } from './github-fixtures.js';

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
    mergeMethod: 'merge_commit',
    ...change,
  };
}

const STAGING = `${REPO_PATH}/git/refs/heads%2Fmq-staging%2Fmain`;
const TEST_REF = `${REPO_PATH}/git/ref/heads%2Fmq%2Fmain%2Frun1`;
/** A build: the queue's staging branch moved to `at` (it exists from earlier runs). */
function freshBuild(scope: nock.Scope, at = BASE): nock.Scope {
  return scope.patch(STAGING, { sha: at, force: true }).reply(200, {});
}
/** The test branch created once, at the final commit. */
function finishBuild(scope: nock.Scope, tip: string): nock.Scope {
  return scope.post(`${REPO_PATH}/git/refs`, { ref: 'refs/heads/mq/main/run1', sha: tip }).reply(201, {});
}

const protection = (contexts: string[], checks: string[] = [], more: Record<string, unknown> = {}) => ({
  url: `${API}${REPO_PATH}/branches/main/protection`,
  required_status_checks: {
    url: `${API}${REPO_PATH}/branches/main/protection/required_status_checks`,
    strict: false,
    contexts,
    checks: checks.map((context) => ({ context, app_id: 15368 })),
  },
  ...more,
});
/** The repository's settings (which merge methods its merge button allows). */
const SETTINGS = { id: 1, name: 'Hello-World', full_name: 'Codertocat/Hello-World', allow_merge_commit: true, allow_squash_merge: true, allow_rebase_merge: true };
/** An unprotected branch without rules, and the repository's settings. */
function noPolicy(scope: nock.Scope): nock.Scope {
  return scope
    .get(`${REPO_PATH}/branches/main/protection`)
    .reply(404, { message: 'Branch not protected' })
    .get(`${REPO_PATH}/rules/branches/main`)
    .query(true)
    .reply(200, [])
    .get(REPO_PATH)
    .reply(200, SETTINGS);
}
const requiredChecksRule = (...contexts: string[]) => ({
  type: 'required_status_checks',
  ruleset_source_type: 'Repository',
  ruleset_source: 'Codertocat/Hello-World',
  ruleset_id: 42,
  parameters: { strict_required_status_checks_policy: false, required_status_checks: contexts.map((context) => ({ context })) },
});
const mergeCommit = (sha: string, parents: string[]) => ({ sha, commit: { message: 'Merge', tree: { sha: `tree-${sha}` } }, parents: parents.map((p) => ({ sha: p })) });

describe('startTestRun', () => {
  test('assembles the run on mq-staging/, then creates mq/<target>/<run> once at the final commit (one CI trigger)', async () => {
    const { host } = testHost();
    const scope = nock(API)
      .get(`${REPO_PATH}/branches/main/protection`)
      .reply(200, protection(['ci/build'], ['ci/test']))
      .get(`${REPO_PATH}/rules/branches/main`)
      .query({ per_page: 100, page: 1 })
      .reply(200, [])
      .get(REPO_PATH)
      .reply(200, SETTINGS);
    freshBuild(scope)
      .post(`${REPO_PATH}/merges`, { base: 'mq-staging/main', head: HEAD2, commit_message: 'Merge pull request #2\n\nAdd widgets' })
      .reply(201, mergeCommit('m1', [BASE, HEAD2]))
      .post(`${REPO_PATH}/merges`, { base: 'mq-staging/main', head: HEAD3, commit_message: 'Widgets, at last\n\nMore' })
      .reply(201, mergeCommit('m2', ['m1', HEAD3]));
    finishBuild(scope, 'm2');
    const seen = requestLog(scope);

    const started = await host.startTestRun(
      request({ heads: [{ prNumber: 2, headSha: HEAD2, title: 'Add widgets' }, { prNumber: 3, headSha: HEAD3, title: 'More', body: 'merge-commit-title: Widgets, at last' }] }),
    );

    // GitHub's example protection binds ci/test to one App (app_id 15368): only that App's result will count for it.
    expect(started).toEqual({ ok: true, testBranch: 'mq/main/run1', testBranchSha: 'm2', requiredStatuses: ['ci/build', 'ci/test'], requiredStatusesSource: 'branch_protection', requiredCheckApps: [{ name: 'ci/test', appId: 15368 }] });
    expect(seen).toEqual([
      `GET ${REPO_PATH}/branches/main/protection`,
      `GET ${REPO_PATH}/rules/branches/main?per_page=100&page=1`,
      `GET ${REPO_PATH}`,
      `PATCH ${REPO_PATH}/git/refs/heads/mq-staging/main`,
      `POST ${REPO_PATH}/merges`,
      `POST ${REPO_PATH}/merges`,
      `POST ${REPO_PATH}/git/refs`,
    ]);
    expect(scope.isDone()).toBe(true);
  });

  test('squash: one single-parent commit per PR with the merged tree, so landing is a fast-forward of squashed commits', async () => {
    const { host } = testHost();
    const scope = freshBuild(noPolicy(nock(API)))
      .post(`${REPO_PATH}/merges`, (b: { head: string }) => b.head === HEAD2)
      .reply(201, mergeCommit('m1', [BASE, HEAD2]))
      .post(`${REPO_PATH}/git/commits`, { message: 'Add widgets (#2)', tree: 'tree-m1', parents: [BASE] })
      .reply(201, { sha: 's1' })
      .patch(STAGING, { sha: 's1', force: true })
      .reply(200, {});
    finishBuild(scope, 's1');
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2, title: 'Add widgets' }], requiredStatuses: ['ci'], mergeMethod: 'squash' }));
    expect(started).toMatchObject({ ok: true, testBranchSha: 's1' });
    expect(scope.isDone()).toBe(true);
  });

  test('rebase: each PR commit replayed as a single-parent commit with its own message and author', async () => {
    const { host } = testHost();
    const author = { name: 'Mona', email: 'mona@example.com', date: '2026-01-01T00:00:00Z' };
    const scope = freshBuild(noPolicy(nock(API)))
      .get(`${REPO_PATH}/pulls/2/commits`)
      .query({ per_page: 100, page: 1 })
      .reply(200, [
        { sha: 'c1', commit: { message: 'first', author }, parents: [{ sha: 'pr-base' }] },
        { sha: HEAD2, commit: { message: 'second', author }, parents: [{ sha: 'c1' }] },
      ])
      .post(`${REPO_PATH}/merges`, (b: { head: string }) => b.head === 'c1')
      .reply(201, mergeCommit('x1', [BASE, 'c1']))
      .post(`${REPO_PATH}/git/commits`, { message: 'first', tree: 'tree-x1', parents: [BASE], author })
      .reply(201, { sha: 'r1' })
      .patch(STAGING, { sha: 'r1', force: true })
      .reply(200, {})
      .post(`${REPO_PATH}/merges`, (b: { head: string }) => b.head === HEAD2)
      .reply(201, mergeCommit('x2', ['r1', HEAD2]))
      .post(`${REPO_PATH}/git/commits`, { message: 'second', tree: 'tree-x2', parents: ['r1'], author })
      .reply(201, { sha: 'r2' })
      .patch(STAGING, { sha: 'r2', force: true })
      .reply(200, {});
    finishBuild(scope, 'r2');
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }], requiredStatuses: ['ci'], mergeMethod: 'rebase' }));
    expect(started).toMatchObject({ ok: true, testBranchSha: 'r2' });
    expect(scope.isDone()).toBe(true);
  });

  test('buildOn: a run behind another starts from that run\'s tested commit and applies only its own heads', async () => {
    const { host } = testHost();
    const scope = freshBuild(noPolicy(nock(API)), 'm1')
      .post(`${REPO_PATH}/merges`, (b: { head: string }) => b.head === HEAD3)
      .reply(201, mergeCommit('m2', ['m1', HEAD3]));
    finishBuild(scope, 'm2');
    const started = await host.startTestRun(request({ requiredStatuses: ['ci'], buildOn: { sha: 'm1', heads: 1 } }));
    expect(started).toMatchObject({ ok: true, testBranchSha: 'm2' });
    expect(scope.isDone()).toBe(true);
  });

  test("the queue's requiredStatuses win over protection's checks", async () => {
    const { host } = testHost();
    const scope = freshBuild(noPolicy(nock(API))).post(`${REPO_PATH}/merges`).reply(201, mergeCommit('m1', [BASE, HEAD2]));
    finishBuild(scope, 'm1');
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }], requiredStatuses: ['e2e', 'e2e'] }));
    expect(started).toMatchObject({ ok: true, testBranchSha: 'm1', requiredStatuses: ['e2e'], requiredStatusesSource: 'queue' });
    expect(scope.isDone()).toBe(true);
  });

  test('branch protection and rulesets together: the union', async () => {
    const { host } = testHost();
    nock(API)
      .get(`${REPO_PATH}/branches/main/protection`)
      .reply(200, protection(['ci/build']))
      .get(`${REPO_PATH}/rules/branches/main`)
      .query(true)
      .reply(200, [{ type: 'pull_request', parameters: { required_approving_review_count: 1 } }, requiredChecksRule('ci/test', 'ci/build')])
      .get(REPO_PATH)
      .reply(200, SETTINGS)
      .patch(STAGING)
      .reply(200, {})
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
      .get(`${REPO_PATH}/branches/main/protection`)
      .reply(404, { message: 'Branch not protected' })
      .get(`${REPO_PATH}/rules/branches/main`)
      .query(true)
      .reply(200, [requiredChecksRule('ci/ruleset')])
      .get(REPO_PATH)
      .reply(200, SETTINGS)
      .patch(STAGING)
      .reply(200, {})
      .post(`${REPO_PATH}/git/refs`)
      .reply(201, {})
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('m1', [BASE, HEAD2]));
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }] }));
    expect(started).toMatchObject({ ok: true, requiredStatuses: ['ci/ruleset'], requiredStatusesSource: 'ruleset' });
  });

  test("the queue's own check required on the branch: the run would never land (the tested commit cannot carry it), so nothing is built", async () => {
    const { host } = testHost();
    const scope = nock(API)
      .get(`${REPO_PATH}/branches/main/protection`)
      .reply(200, protection(['ci/build', 'Merge Queue (main)']))
      .get(`${REPO_PATH}/rules/branches/main`)
      .query(true)
      .reply(200, [])
      .get(REPO_PATH)
      .reply(200, SETTINGS);
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }] }));
    expect(started).toMatchObject({ ok: false, reason: 'cannot_land', message: expect.stringContaining('requires the queue\'s own check "Merge Queue (main)"') });
    expect(scope.isDone()).toBe(true);
  });

  test.each([
    ['the repository turned squash merges off', { settings: { allow_squash_merge: false } }, 'squash', /does not allow squash merges/],
    ['linear history with merge commits', { protection: { required_linear_history: { enabled: true } } }, 'merge_commit', /requires a linear history/],
    ['a ruleset allowing only rebase', { rules: [{ type: 'pull_request', ruleset_id: 7, parameters: { allowed_merge_methods: ['rebase'] } }] }, 'squash', /allows only rebase merges/],
    ['a pull request required, the App not on the bypass list', { protection: { required_pull_request_reviews: { bypass_pull_request_allowances: { users: [], teams: [], apps: [{ slug: 'someone-else' }] } } } }, 'squash', /may not bypass it/],
    ['push restrictions without the App', { protection: { restrictions: { users: [], teams: [], apps: [] } } }, 'squash', /is not listed/],
  ] as const)('predicted refusal, before any CI: %s', async (_name, policy, mergeMethod, message) => {
    const { host } = testHost({ appSlug: 'merge-queue' });
    const p = policy as { settings?: Record<string, unknown>; protection?: Record<string, unknown>; rules?: object[] };
    const scope = nock(API)
      .get(`${REPO_PATH}/branches/main/protection`)
      .reply(200, protection(['ci'], [], p.protection ?? {}))
      .get(`${REPO_PATH}/rules/branches/main`)
      .query(true)
      .reply(200, p.rules ?? [])
      .get(REPO_PATH)
      .reply(200, { ...SETTINGS, ...(p.settings ?? {}) });
    const started = await host.startTestRun(request({ mergeMethod }));
    expect(started).toMatchObject({ ok: false, reason: 'cannot_land', message: expect.stringMatching(message) });
    expect(scope.isDone()).toBe(true);
  });

  test('the App on the bypass list (classic) and a ruleset it may always bypass: nothing predicted, the run is built', async () => {
    const { host } = testHost({ appSlug: 'merge-queue' });
    const scope = nock(API)
      .get(`${REPO_PATH}/branches/main/protection`)
      .reply(200, protection(['ci'], [], { required_pull_request_reviews: { bypass_pull_request_allowances: { users: [], teams: [], apps: [{ slug: 'merge-queue' }] } } }))
      .get(`${REPO_PATH}/rules/branches/main`)
      .query(true)
      .reply(200, [{ type: 'pull_request', ruleset_id: 7, parameters: {} }])
      .get(REPO_PATH)
      .reply(200, SETTINGS)
      .get(`${REPO_PATH}/rulesets/7`)
      .reply(200, { id: 7, name: 'main rules', current_user_can_bypass: 'always' });
    freshBuild(scope).post(`${REPO_PATH}/merges`).reply(201, mergeCommit('m1', [BASE, HEAD2]));
    finishBuild(scope, 'm1');
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }] }));
    expect(started).toMatchObject({ ok: true, testBranchSha: 'm1' });
    expect(scope.isDone()).toBe(true);
  });

  test('no required checks anywhere: refused with a clear reason, and no branch is made', async () => {
    const { host } = testHost();
    const scope = nock(API)
      .get(`${REPO_PATH}/branches/main/protection`)
      .reply(404, { message: 'Branch not protected' })
      .get(`${REPO_PATH}/rules/branches/main`)
      .query(true)
      .reply(200, [{ type: 'deletion' }]);
    const started = await host.startTestRun(request({ requiredStatuses: [] }));
    expect(started).toEqual({
      ok: false,
      reason: 'no_required_statuses',
      message: "No required status checks are configured for main (branch protection, rulesets or the queue's requiredStatuses); the queue never merges untested code. Name the checks CI reports, then update the queue to resume.",
    });
    expect(scope.isDone()).toBe(true);
  });

  test('a conflict fails the PR that does not apply; no test branch is made, nothing to clean up', async () => {
    const { host } = testHost();
    const scope = freshBuild(noPolicy(nock(API)))
      .post(`${REPO_PATH}/merges`, (body: { head: string }) => body.head === HEAD2)
      .reply(201, mergeCommit('m1', [BASE, HEAD2]))
      .post(`${REPO_PATH}/merges`, (body: { head: string }) => body.head === HEAD3)
      .reply(409, { message: 'Merge conflict' });
    const seen = requestLog(scope);
    const started = await host.startTestRun(request({ requiredStatuses: ['ci/build'] }));
    expect(started).toEqual({ ok: false, reason: 'merge_conflict', prNumber: 3 });
    expect(seen.filter((r) => r.startsWith('DELETE') || r.startsWith('POST') && r.endsWith('/git/refs'))).toEqual([]);
    expect(scope.isDone()).toBe(true);
  });

  test('asked again after a complete build: the test branch already there is kept as it is (CI does not start over)', async () => {
    const { host } = testHost();
    const scope = freshBuild(noPolicy(nock(API)))
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('n1', [BASE, HEAD2]))
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('n2', ['n1', HEAD3]))
      .post(`${REPO_PATH}/git/refs`, { ref: 'refs/heads/mq/main/run1', sha: 'n2' })
      .reply(422, { message: 'Reference already exists' })
      .get(TEST_REF)
      .reply(200, { ref: 'refs/heads/mq/main/run1', object: { sha: 'm2', type: 'commit' } });
    const started = await host.startTestRun(request({ requiredStatuses: ['ci/build'] }));
    expect(started).toMatchObject({ ok: true, testBranch: 'mq/main/run1', testBranchSha: 'm2' });
    expect(scope.isDone()).toBe(true);
  });

  test('the first run of a queue creates its staging branch', async () => {
    const { host } = testHost();
    const scope = noPolicy(nock(API))
      .patch(STAGING, { sha: BASE, force: true })
      .reply(422, { message: 'Reference does not exist' })
      .post(`${REPO_PATH}/git/refs`, { ref: 'refs/heads/mq-staging/main', sha: BASE })
      .reply(201, {})
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('n1', [BASE, HEAD2]));
    finishBuild(scope, 'n1');
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }], requiredStatuses: ['ci/build'] }));
    expect(started).toMatchObject({ ok: true, testBranchSha: 'n1' });
    expect(scope.isDone()).toBe(true);
  });

  /** #2 merged as m1, then GitHub says #3 is in the branch already (204), and compare says how #3 stands to m1. */
  const secondAlreadyIn = (compare: { status: string; ahead_by: number; behind_by: number }) =>
    freshBuild(noPolicy(nock(API)))
      .post(`${REPO_PATH}/merges`)
      .reply(201, mergeCommit('m1', [BASE, HEAD2]))
      .post(`${REPO_PATH}/merges`)
      .reply(204)
      .get(`${REPO_PATH}/compare/${HEAD3}...m1`)
      .query(true)
      .reply(200, compare);

  test('a head already in the branch (204) leaves the tip where it is, once compare says the build so far holds it', async () => {
    const { host } = testHost();
    const scope = secondAlreadyIn({ status: 'ahead', ahead_by: 1, behind_by: 0 });
    finishBuild(scope, 'm1');
    expect(await host.startTestRun(request({ requiredStatuses: ['ci/build'] }))).toMatchObject({ ok: true, testBranchSha: 'm1' });
    expect(scope.isDone()).toBe(true);
  });

  describe('another build moving the staging branch meanwhile (a replica finishing a build after its lease ran out)', () => {
    test('a merge that went onto another tip: nothing is built from it, and the failure is one the runner retries', async () => {
      const { host } = testHost();
      const scope = freshBuild(noPolicy(nock(API)))
        .post(`${REPO_PATH}/merges`)
        .reply(201, mergeCommit('m1', [BASE, HEAD2]))
        // The other build reset the staging branch to the base: this merge went onto it, not onto m1.
        .post(`${REPO_PATH}/merges`)
        .reply(201, mergeCommit('m2', [BASE, HEAD3]));
      const seen = requestLog(scope);
      const failure = await host.startTestRun(request({ requiredStatuses: ['ci/build'] })).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StagingMoved);
      expect(isTransientHostError(failure)).toBe(true);
      expect(seen.filter((line) => line.startsWith('POST') && line.endsWith('/git/refs'))).toEqual([]);
    });

    test('a 204 for a head the build so far lacks (the branch moved to a commit holding it)', async () => {
      const { host } = testHost();
      const scope = secondAlreadyIn({ status: 'diverged', ahead_by: 1, behind_by: 1 });
      await expect(host.startTestRun(request({ requiredStatuses: ['ci/build'] }))).rejects.toBeInstanceOf(StagingMoved);
      expect(scope.isDone()).toBe(true);
    });
  });

  test('createPullRequest: a draft PR for CI systems that only test PRs', async () => {
    const { host } = testHost();
    const scope = freshBuild(noPolicy(nock(API))).post(`${REPO_PATH}/merges`).reply(201, mergeCommit('m1', [BASE, HEAD2]));
    finishBuild(scope, 'm1')
      .post(`${REPO_PATH}/pulls`, (body: Record<string, unknown>) => body.title === 'Merge queue test run1' && body.head === 'mq/main/run1' && body.base === 'main' && body.draft === true)
      .reply(201, { number: 99 });
    const started = await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }], requiredStatuses: ['ci/build'], createPullRequest: true }));
    expect(started).toMatchObject({ ok: true, testBranchSha: 'm1' });
    expect(scope.isDone()).toBe(true);
  });

  test('the draft PR cannot be opened (403): the branch is removed and the failure thrown', async () => {
    const { host } = testHost();
    const scope = freshBuild(noPolicy(nock(API))).post(`${REPO_PATH}/merges`).reply(201, mergeCommit('m1', [BASE, HEAD2]));
    finishBuild(scope, 'm1')
      .post(`${REPO_PATH}/pulls`)
      .reply(403, { message: 'Resource not accessible by integration' })
      .get(`${REPO_PATH}/pulls`)
      .query(true)
      .reply(200, [])
      .delete(`${REPO_PATH}/git/refs/heads%2Fmq%2Fmain%2Frun1`)
      .reply(204);
    await expect(host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }], requiredStatuses: ['ci/build'], createPullRequest: true }))).rejects.toMatchObject({ status: 403 });
  });

  test('a failure while building is thrown (a test branch left by it is removed)', async () => {
    const { host } = testHost();
    const scope = freshBuild(noPolicy(nock(API)))
      .post(`${REPO_PATH}/merges`)
      .reply(404, { message: 'Head does not exist' })
      .delete(`${REPO_PATH}/git/refs/heads%2Fmq%2Fmain%2Frun1`)
      .reply(422, { message: 'Reference does not exist' });
    await expect(host.startTestRun(request({ requiredStatuses: ['ci/build'] }))).rejects.toMatchObject({ status: 404 });
    expect(scope.isDone()).toBe(true);
  });
});

describe("the repository's merge settings kept between runs (a request a run); protection and rules read for each", () => {
  const one = (runId: string, change: Partial<TestRunRequest> = {}) => request({ runId, heads: [{ prNumber: 2, headSha: HEAD2 }], ...change });
  /** The branch's protection requiring `contexts` and no rules, read for every run. */
  function branchRead(scope: nock.Scope, contexts = ['ci']): nock.Scope {
    return scope.get(`${REPO_PATH}/branches/main/protection`).reply(200, protection(contexts)).get(`${REPO_PATH}/rules/branches/main`).query(true).reply(200, []);
  }
  const settingsRead = (scope: nock.Scope, settings: Record<string, unknown> = {}) => scope.get(REPO_PATH).reply(200, { ...SETTINGS, ...settings });
  /** A one-PR build of `runId` (the test branch made at `tip`). Nothing else is answered: any other read fails the run. */
  function build(scope: nock.Scope, runId: string, tip: string): nock.Scope {
    return freshBuild(scope).post(`${REPO_PATH}/merges`).reply(201, mergeCommit(tip, [BASE, HEAD2])).post(`${REPO_PATH}/git/refs`, { ref: `refs/heads/mq/main/${runId}`, sha: tip }).reply(201, {});
  }

  test("the second run reads protection and rules again (a check added since decides it) but not the settings", async () => {
    const { host } = testHost();
    const first = build(settingsRead(branchRead(nock(API))), 'run1', 'm1');
    expect(await host.startTestRun(one('run1'))).toMatchObject({ ok: true, requiredStatuses: ['ci'] });
    expect(first.isDone()).toBe(true);
    const second = build(branchRead(nock(API), ['ci', 'lint']), 'run2', 'm2');
    expect(await host.startTestRun(one('run2'))).toMatchObject({ ok: true, requiredStatuses: ['ci', 'lint'] });
    expect(second.isDone()).toBe(true);
  });

  test('kept no longer than settingsKeptMs', async () => {
    const { host } = testHost({ settingsKeptMs: 20 });
    build(settingsRead(branchRead(nock(API))), 'run1', 'm1');
    expect(await host.startTestRun(one('run1'))).toMatchObject({ ok: true });
    await new Promise((r) => setTimeout(r, 40));
    const second = build(settingsRead(branchRead(nock(API))), 'run2', 'm2');
    expect(await host.startTestRun(one('run2'))).toMatchObject({ ok: true });
    expect(second.isDone()).toBe(true);
  });

  test('a refusal is never said on what was kept: read afresh first, so a fix the operator just made is seen', async () => {
    const { host } = testHost();
    settingsRead(branchRead(nock(API)), { allow_merge_commit: false });
    expect(await host.startTestRun(one('run1'))).toMatchObject({ ok: false, reason: 'cannot_land', message: expect.stringMatching(/does not allow merge commit merges/) });
    // Merge commits turned on: the kept settings still say no, so everything is read again, and the run is built.
    const scope = build(settingsRead(branchRead(branchRead(nock(API))), { allow_merge_commit: true }), 'run2', 'm2');
    expect(await host.startTestRun(one('run2'))).toMatchObject({ ok: true, testBranchSha: 'm2' });
    expect(scope.isDone()).toBe(true);
  });

  test('a landing GitHub refused for a reason no PR caused forgets what was kept: the next run reads the settings again', async () => {
    const { host, runs } = testHost();
    build(settingsRead(branchRead(nock(API))), 'run1', 'm1');
    expect(await host.startTestRun(one('run1'))).toMatchObject({ ok: true });
    runs.push(testRunRecord({ status: 'succeeded', testBranchSha: 'm1' }));
    nock(API)
      .get(`${REPO_PATH}/pulls/2`)
      .reply(200, pullRequestJson({ number: 2, headSha: HEAD2, base: 'main' }))
      .get(`${REPO_PATH}/git/ref/heads%2Fmain`)
      .reply(200, { object: { sha: BASE } })
      .patch(`${REPO_PATH}/git/refs/heads%2Fmain`)
      .reply(422, { message: 'Protected branch update failed for refs/heads/main: Changes must be made through a pull request.' });
    const landed = await host.merge({ repo: REPO, targetBranch: 'main', runId: 'run1', expectedBaseSha: BASE, heads: [{ prNumber: 2, headSha: HEAD2 }], mergeMethod: 'merge_commit' });
    expect(landed).toMatchObject({ ok: false, reason: 'blocked' });
    const next = build(settingsRead(branchRead(nock(API))), 'run2', 'm2');
    expect(await host.startTestRun(one('run2'))).toMatchObject({ ok: true });
    expect(next.isDone()).toBe(true);
  });
});

test('checks reported on a test commit before the queue recorded it are looked at again shortly (once, and only then)', async () => {
  const { host, finished, runs } = testHost();
  // CI reported at once: no run is known to test m1 yet.
  expect(await host.onCommitChecksChanged(REPO, 'm1')).toBe('no_run');
  const build = freshBuild(noPolicy(nock(API))).post(`${REPO_PATH}/merges`).reply(201, mergeCommit('m1', [BASE, HEAD2]));
  finishBuild(build, 'm1');
  await host.startTestRun(request({ heads: [{ prNumber: 2, headSha: HEAD2 }], requiredStatuses: ['ci'] }));
  // The runner records the commit; the look a second later finds the result and reports it.
  runs.push(testRunRecord({ testBranchSha: 'm1', requiredStatuses: ['ci'] }));
  const look = nock(API)
    .get(`${REPO_PATH}/commits/m1/check-runs`)
    .query(true)
    .reply(200, { total_count: 1, check_runs: [checkRunJson({ id: 1, name: 'ci', status: 'completed', conclusion: 'success' })] })
    .delete(`${REPO_PATH}/git/refs/heads%2Fmq%2Fmain%2Frun1`)
    .reply(204);
  const deadline = Date.now() + 5_000;
  while (finished.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(finished).toEqual([expect.objectContaining({ runId: 'run1', passed: true })]);
  expect(look.isDone()).toBe(true);
});
