/**
 * The rebase method replays a PR's commits as GitHub lists them: pages of at most
 * 100, and no more than 250 commits for a PR. Every page is read, and a list that
 * does not end at the PR's head is not built at all: cut at 250, the queue says why
 * (no PR failed); the head moved, the runner reads the PR again (the push drops the
 * run). Never a test and a landing of part of the PR. Against the fake
 * GitHub, which pages and caps the list as GitHub does.
 */
import { Octokit } from '@octokit/rest';
import type { RepoRef } from '../../src/domain/repo.js';
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

test('a PR of more than 250 commits (GitHub lists only 250): not built, refused with the reason and the way out, no PR failed', async () => {
  const n = repo.openPullRequest({ title: 'Huge', commits: 260 });

  const started = await host().startTestRun(rebaseRun(n));

  expect(started).toEqual({ ok: false, reason: 'cannot_land', message: expect.stringMatching(/#1 has more than 250 commits.*squash/) });
  // Nothing replayed, no test branch, no CI.
  expect(fake.requestsTo('git/create-commit')).toEqual([]);
  expect(repo.branches().filter((b) => b.startsWith('mq/'))).toEqual([]);
  fake.assertNoViolations();
});

test('a head that is not where the PR\'s commits end (pushed since it was queued): not built, said to have changed, rather than replaying other content', async () => {
  const n = repo.openPullRequest({ title: 'Moving', commits: 2 });
  const request = rebaseRun(n);
  repo.pushToPullRequest(n);

  const started = await host().startTestRun(request);

  expect(started).toEqual({ ok: false, reason: 'head_changed', prNumber: n });
  expect(repo.branches().filter((b) => b.startsWith('mq/'))).toEqual([]);
  fake.assertNoViolations();
});
