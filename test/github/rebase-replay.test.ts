/**
 * The rebase method replays a PR's commits as GitHub lists them: pages of at most
 * 100, and no more than 250 commits for a PR. Every page is read, the list is
 * replayed by ancestry, from the head to test back (GitHub lists by date), and a
 * head not listed is not built at all: cut at 250, that PR is refused with why; the
 * head force-pushed away, the runner reads the PR again. Never a test and a landing
 * of part of the PR, or of another head. Against the fake
 * GitHub, which pages and caps the list as GitHub does.
 */
import { Octokit } from '@octokit/rest';
import type { RepoRef } from '../../src/domain/repo.js';
import { ancestryOf } from '../../src/adapters/github/test-branch.js';
import type { PullRequestCommitData } from '../../src/adapters/github/github-types.js';
import type { TestRunRequest } from '../../src/ports/git-host.js';
import { startFakeGitHub, type FakeGitHub, type FakeRepo } from '../support/fake-github/index.js';
import { queueRecord, testHost } from './github-fixtures.js';

const REF: RepoRef = { host: 'github.com', owner: 'acme', name: 'widgets' };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

let fake: FakeGitHub;
let repo: FakeRepo;

beforeEach(async () => {
  fake = await startFakeGitHub({ defaultPermission: 'write' });
  repo = fake.createRepo('acme/widgets');
});

afterEach(async () => {
  await fake.close();
});

function host() {
  const client = new Octokit({ baseUrl: fake.baseUrl, auth: fake.installationToken('acme'), log: quiet, request: { retries: 0 } });
  return testHost({ client, queues: [queueRecord({ repo: REF })] }).host;
}

function rebaseRun(prNumber: number): TestRunRequest {
  return { queueId: 'q1', repo: REF, targetBranch: 'main', runId: 'run1', baseSha: repo.branch('main')!, heads: [{ prNumber, headSha: repo.pullRequest(prNumber).headSha }], requiredStatuses: ['ci'], mergeMethod: 'rebase' };
}

test('a PR of 120 commits: every page is read and all 120 are replayed, so the test commit holds the whole PR', async () => {
  const n = repo.openPullRequest({ title: 'Big', commits: 120 });
  const head = repo.pullRequest(n).headSha;

  const started = await host().startTestRun(rebaseRun(n));

  expect(started).toMatchObject({ ok: true, testBranch: 'mq/main/run1' });
  const tested = started.ok ? started.testBranchSha! : '';
  expect(fake.treeOf(tested)).toHaveLength(120);
  expect(fake.sameContent(tested, head)).toBe(true);
  // Replayed one by one, the last with the PR's last commit message.
  expect(fake.messageOf(tested)).toBe(fake.messageOf(head));
  expect(fake.requestsTo('pulls/list-commits').map((r) => r.query)).toEqual([
    { per_page: '100', page: '1' },
    { per_page: '100', page: '2' },
  ]);
  fake.assertNoViolations();
});

test('a PR of more than 250 commits (GitHub lists only 250): not built, that PR refused with the reason and the way out', async () => {
  const n = repo.openPullRequest({ title: 'Huge', commits: 260 });

  const started = await host().startTestRun(rebaseRun(n));

  expect(started).toEqual({ ok: false, reason: 'pr_unbuildable', prNumber: n, message: expect.stringMatching(/#1 has more than 250 commits.*squash/) });
  // Nothing replayed, no test branch, no CI.
  expect(fake.requestsTo('git/create-commit')).toEqual([]);
  expect(repo.branches().filter((b) => b.startsWith('mq/'))).toEqual([]);
  fake.assertNoViolations();
});

test('a head that is not among the PR\'s commits (force-pushed since it was queued): not built, said to have changed, rather than replaying other content', async () => {
  const n = repo.openPullRequest({ title: 'Moving', commits: 2 });
  const request = rebaseRun(n);
  repo.pushToPullRequest(n, { rebase: true });

  const started = await host().startTestRun(request);

  expect(started).toEqual({ ok: false, reason: 'head_changed', prNumber: n });
  expect(repo.branches().filter((b) => b.startsWith('mq/'))).toEqual([]);
  fake.assertNoViolations();
});

test('a head with commits pushed on top since it was queued: the head to test is built, its own commits and no later one', async () => {
  const n = repo.openPullRequest({ title: 'Growing', commits: 2 });
  const request = rebaseRun(n);
  const queued = repo.pullRequest(n).headSha;
  repo.pushToPullRequest(n);

  const started = await host().startTestRun(request);

  expect(started).toMatchObject({ ok: true });
  const tested = repo.branch('mq/main/run1')!;
  expect(fake.sameContent(tested, queued)).toBe(true);
  fake.assertNoViolations();
});

describe('ancestryOf: the commits a head is built from, parents first', () => {
  const commit = (sha: string, ...parents: string[]) => ({ sha, parents: parents.map((p) => ({ sha: p })) }) as unknown as PullRequestCommitData;
  const shas = (commits: PullRequestCommitData[] | null) => commits?.map((c) => c.sha) ?? null;

  test('listed by date out of ancestry (a rebase reordered them): replayed by their parents', () => {
    expect(shas(ancestryOf([commit('c', 'b'), commit('a', 'base'), commit('b', 'a')], 'c'))).toEqual(['a', 'b', 'c']);
  });

  test('commits after the head are left out; a merge commit comes after both its parents', () => {
    expect(shas(ancestryOf([commit('a', 'base'), commit('b', 'a'), commit('c', 'b')], 'b'))).toEqual(['a', 'b']);
    expect(shas(ancestryOf([commit('x', 'base'), commit('y', 'base'), commit('m', 'x', 'y')], 'm'))).toEqual(['x', 'y', 'm']);
  });

  test('a head not listed: null', () => {
    expect(ancestryOf([commit('a', 'base')], 'gone')).toBeNull();
  });
});
