/**
 * Writes whose answer GitHub lost (a 5xx after the write went through), through the client production uses: its
 * retry plugin asks a failed request again by itself. Found by the randomized scenario (test/e2e/github-manners):
 * - a comment's POST asked again posted the comment twice (the Landed comment, the ejection comment; a check run
 *   too): a write that makes something new is not repeated blind (NOT_REPEATED_BLIND), but asked again only once
 *   a look finds that the failed attempt made nothing (makeOnce);
 * - the staging branch's first create asked again answered "Reference already exists", which was taken for a move
 *   refused by a rule: the queue stopped landing.
 * Against the fake GitHub.
 */
import { createGitHubOctokit } from '../../src/adapters/github/index.js';
import { landTestedCommit } from '../../src/adapters/github/land-tested-commit.js';
import { postEjectionComment, publishCheckRun } from '../../src/adapters/github/pull-request-feedback.js';
import { buildTestBranch } from '../../src/adapters/github/test-branch.js';
import type { GitHubClient } from '../../src/adapters/github/github-client.js';
import type { RepoRef } from '../../src/domain/repo.js';
import { startFakeGitHub, type FakeGitHub, type FakeRepo } from '../support/fake-github/index.js';
import { recordingLog } from './github-fixtures.js';

const REF: RepoRef = { host: 'github.com', owner: 'acme', name: 'widgets' };

let fake: FakeGitHub;
let repo: FakeRepo;
let client: GitHubClient;

beforeEach(async () => {
  fake = await startFakeGitHub({ defaultPermission: 'write' });
  repo = fake.createRepo('acme/widgets');
  // As in production: retries with back-off (shortened), throttling off so the test does not wait.
  client = createGitHubOctokit({ auth: fake.installationToken('acme'), baseUrl: fake.baseUrl, log: recordingLog(), unitMs: 1, spaceWrites: false });
});

afterEach(async () => {
  fake.assertNoViolations();
  await fake.close();
});

async function build(runId: string) {
  const n = repo.openPullRequest({ title: 'Feature', commits: 1 });
  const heads = [{ prNumber: n, headSha: repo.pullRequest(n).headSha }];
  const base = repo.branch('main') as string;
  const built = await buildTestBranch(client, REF, `mq/main/${runId}`, { queueId: 'q1', repo: REF, targetBranch: 'main', runId, baseSha: base, heads, mergeMethod: 'squash' });
  return { n, base, heads, built };
}

test("the first build of a target, its staging branch's create answered 502 after it was made: the client's retry hears it exists, the build goes on", async () => {
  expect(repo.branch('mq-staging/main')).toBeUndefined();
  fake.failNext({ operationId: 'git/create-ref', status: 502, message: 'Server Error', afterHandling: true });

  const { n, built } = await build('r1');

  expect(built).toEqual({ ok: true, sha: expect.any(String) });
  const sha = (built as { sha: string }).sha;
  expect(repo.branch('mq/main/r1')).toBe(sha);
  expect(fake.pullRequestsIn(sha)).toEqual([n]);
  // The create was made, its answer lost, asked again (the client), and the branch moved once it was known to exist.
  expect(fake.requestsTo('git/create-ref').filter((r) => (r.body as { ref?: string }).ref === 'refs/heads/mq-staging/main').map((r) => r.status)).toEqual([502, 422]);
});

const commentPosts = () => fake.requestsTo('issues/create-comment').map((r) => r.status);

test('the Landed comment answered 502 after it was posted: not posted again blind; looked for, found, and the landing goes on', async () => {
  const { n, base, heads, built } = await build('r1');
  if (!built.ok) throw new Error('the fake could not build the run');
  const merge = { repo: REF, targetBranch: 'main', runId: 'r1', expectedBaseSha: base, heads, mergeMethod: 'squash' as const, runStartedAt: new Date(Date.now() - 60_000) };
  fake.failNext({ operationId: 'issues/create-comment', status: 502, message: 'Server Error', afterHandling: true });

  expect(await landTestedCommit(client, merge, built.sha, recordingLog())).toEqual({ ok: true, newBaseSha: built.sha });

  expect(repo.branch('main')).toBe(built.sha);
  expect(repo.pullRequest(n).state).toBe('closed');
  expect(repo.comments(n).filter((c) => c.body.startsWith('Landed on'))).toHaveLength(1);
  expect(commentPosts()).toEqual([502]);
});

test('the Landed comment answered 502 before it was posted: looked for, not found, posted once more', async () => {
  const { n, base, heads, built } = await build('r1');
  if (!built.ok) throw new Error('the fake could not build the run');
  const merge = { repo: REF, targetBranch: 'main', runId: 'r1', expectedBaseSha: base, heads, mergeMethod: 'squash' as const, runStartedAt: new Date(Date.now() - 60_000) };
  fake.failNext({ operationId: 'issues/create-comment', status: 502, message: 'Server Error' });

  expect(await landTestedCommit(client, merge, built.sha, recordingLog())).toEqual({ ok: true, newBaseSha: built.sha });

  expect(repo.comments(n).filter((c) => c.body.startsWith('Landed on'))).toHaveLength(1);
  expect(commentPosts()).toEqual([502, 201]);
});

test('an ejection whose comment and check run were answered 502 after they were made: each made once, found rather than made again', async () => {
  const n = repo.openPullRequest({ title: 'Breaks', commits: 1 });
  const update = {
    repo: REF,
    targetBranch: 'main',
    prNumber: n,
    headSha: repo.pullRequest(n).headSha,
    state: 'FAILED' as const,
    reason: 'failed_tests' as const,
    testRun: { runId: 'r1', testBranch: 'mq/main/r1', failedChecks: ['ci'] },
    statusCheckEnabled: true,
    commentsEnabled: true,
  };
  const context = { label: 'merge-queue', failingChecks: [] };
  fake.failNext({ operationId: 'checks/create', status: 502, message: 'Server Error', afterHandling: true });
  fake.failNext({ operationId: 'issues/create-comment', status: 502, message: 'Server Error', afterHandling: true });

  await publishCheckRun(client, update, context, new Date());
  await postEjectionComment(client, update, context);

  expect(fake.checkRuns(update.headSha, 'Merge Queue (main)')).toHaveLength(1);
  expect(fake.requestsTo('checks/create').map((r) => r.status)).toEqual([502]);
  expect(repo.comments(n)).toHaveLength(1);
  expect(commentPosts()).toEqual([502]);
  // Asked again whole (the runner's retry), nothing is made twice either.
  await publishCheckRun(client, update, context, new Date());
  await postEjectionComment(client, update, context);
  expect(fake.checkRuns(update.headSha, 'Merge Queue (main)')).toHaveLength(1);
  expect(repo.comments(n)).toHaveLength(1);
});
