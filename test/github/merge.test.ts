import nock from 'nock';
import type { MergeMethod } from '../../src/domain/queue-config.js';
import type { MergeRequest } from '../../src/ports/git-host.js';
import { API, REPO, REPO_PATH, pullRequestJson, requestLog, testHost, testRunRecord, useNock } from './github-fixtures.js';

useNock();

const BASE = 'f95f852bd8fca8fcc58a9a2d6c842781e32a215e';
const HEAD2 = 'ec26c3e57ca3a959ca5aad62de7213c562f8c821';
const HEAD3 = '3333333333333333333333333333333333333333';
const TITLE_BODY = 'Some description.\r\n\r\nmerge-commit-title: Add the README section (#2)\r\n';

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
    mergeMethod: 'squash',
    ...change,
  };
}

/** A PR of this queue (the example's base is `master`). */
const pr = (number: number, headSha: string, change: Record<string, unknown> = {}) => pullRequestJson({ number, headSha, base: 'main', ...change });
const runs = () => [testRunRecord({ status: 'succeeded', testBranchSha: 'tested' })];
const commit = (sha: string, tree: string) => ({ sha, tree: { sha: tree }, parents: [], message: '' });

function baseAt(sha: string) {
  return nock(API).get(`${REPO_PATH}/git/ref/heads%2Fmain`).reply(200, { ref: 'refs/heads/main', object: { sha, type: 'commit' } });
}
function testBranchGone() {
  return nock(API)
    .get(`${REPO_PATH}/pulls`)
    .query({ head: 'Codertocat:mq/main/run1', state: 'open' })
    .reply(200, [])
    .delete(`${REPO_PATH}/git/refs/heads%2Fmq%2Fmain%2Frun1`)
    .reply(422, { message: 'Reference does not exist' });
}

describe('merge', () => {
  test.each([
    ['merge_commit', 'merge', true],
    ['squash', 'squash', true],
    ['rebase', 'rebase', false],
  ] as const)('%s: re-checks, merges each PR in order as GitHub %s, title from the body: %s', async (mergeMethod: MergeMethod, gitHubMethod, withTitle) => {
    const { host, log } = testHost({ runs: runs() });
    const scope = baseAt(BASE)
      .get(`${REPO_PATH}/pulls/2`)
      .reply(200, pr(2, HEAD2, { body: TITLE_BODY }))
      .get(`${REPO_PATH}/pulls/3`)
      .reply(200, pr(3, HEAD3))
      .put(`${REPO_PATH}/pulls/2/merge`, {
        merge_method: gitHubMethod,
        sha: HEAD2,
        ...(withTitle ? { commit_title: 'Add the README section (#2)' } : {}),
      })
      .reply(200, { sha: 'merged2', merged: true, message: 'Pull Request successfully merged' })
      .put(`${REPO_PATH}/pulls/3/merge`, { merge_method: gitHubMethod, sha: HEAD3 }) // No title line: GitHub's default.
      .reply(200, { sha: 'merged3', merged: true, message: 'Pull Request successfully merged' })
      .get(`${REPO_PATH}/git/commits/merged3`)
      .reply(200, commit('merged3', 'tree-1'))
      .get(`${REPO_PATH}/git/commits/tested`)
      .reply(200, commit('tested', 'tree-1'));
    const seen = requestLog(scope);
    const cleanup = testBranchGone();

    expect(await host.merge(request({ mergeMethod }))).toEqual({ ok: true, newBaseSha: 'merged3' });

    expect(seen.slice(0, 5)).toEqual([
      `GET ${REPO_PATH}/git/ref/heads/main`,
      `GET ${REPO_PATH}/pulls/2`,
      `GET ${REPO_PATH}/pulls/3`,
      `PUT ${REPO_PATH}/pulls/2/merge`,
      `PUT ${REPO_PATH}/pulls/3/merge`,
    ]);
    expect(scope.isDone() && cleanup.isDone()).toBe(true);
    expect(log.entries.filter((e) => e.level === 'error')).toEqual([]);
  });

  test('merged content that differs from the tested content is logged loudly, and the merge still reported', async () => {
    const { host, log } = testHost({ runs: runs() });
    baseAt(BASE)
      .get(`${REPO_PATH}/pulls/2`)
      .reply(200, pr(2, HEAD2))
      .put(`${REPO_PATH}/pulls/2/merge`)
      .reply(200, { sha: 'merged2', merged: true })
      .get(`${REPO_PATH}/git/commits/merged2`)
      .reply(200, commit('merged2', 'tree-merged'))
      .get(`${REPO_PATH}/git/commits/tested`)
      .reply(200, commit('tested', 'tree-tested'));
    testBranchGone();
    expect(await host.merge(request({ heads: [{ prNumber: 2, headSha: HEAD2 }] }))).toEqual({ ok: true, newBaseSha: 'merged2' });
    expect(log.entries).toContainEqual(
      expect.objectContaining({ level: 'error', message: expect.stringContaining('MERGED CONTENT DIFFERS FROM TESTED CONTENT'), details: expect.objectContaining({ mergedTree: 'tree-merged', testedTree: 'tree-tested' }) }),
    );
  });

  test('the base moved outside the queue: nothing merged', async () => {
    const { host } = testHost({ runs: runs() });
    baseAt('someone-pushed');
    testBranchGone();
    expect(await host.merge(request())).toEqual({ ok: false, reason: 'base_moved' });
  });

  test('a PR head changed since it was tested: nothing merged', async () => {
    const { host } = testHost({ runs: runs() });
    baseAt(BASE)
      .get(`${REPO_PATH}/pulls/2`)
      .reply(200, pr(2, HEAD2))
      .get(`${REPO_PATH}/pulls/3`)
      .reply(200, pr(3, 'pushed-again'));
    testBranchGone();
    expect(await host.merge(request())).toEqual({ ok: false, reason: 'head_changed' });
  });

  test.each([
    ['closed', { state: 'closed' }],
    ['merged already', { state: 'closed', merged: true }],
    ['retargeted to another branch', { base: 'release' }],
  ])('a PR %s: nothing merged', async (_name, change) => {
    const { host } = testHost({ runs: runs() });
    baseAt(BASE)
      .get(`${REPO_PATH}/pulls/2`)
      .reply(200, pr(2, HEAD2, change));
    testBranchGone();
    expect(await host.merge(request())).toEqual({ ok: false, reason: 'pr_closed' });
  });

  test.each([405, 409])('GitHub refuses the merge (%i): merge_failed', async (status) => {
    const { host, log } = testHost({ runs: runs() });
    baseAt(BASE)
      .get(`${REPO_PATH}/pulls/2`)
      .reply(200, pr(2, HEAD2))
      .put(`${REPO_PATH}/pulls/2/merge`)
      .reply(status, { message: 'Pull Request is not mergeable' });
    testBranchGone();
    expect(await host.merge(request({ heads: [{ prNumber: 2, headSha: HEAD2 }] }))).toEqual({ ok: false, reason: 'merge_failed' });
    expect(log.entries.some((e) => e.level === 'error' && e.message === 'GitHub refused to merge a tested pull request')).toBe(true);
  });
});
