/**
 * Landing asked again: an earlier attempt may have moved the branch and lost its
 * answer (a time-out, a 5xx after the write), or failed while closing the PRs, and
 * the branch may have moved on since. Such a landing is done (the branch holds the
 * tested commit) and must never land twice. And what GitHub answers while landing
 * that is no refusal (rate limits, its intermittent "Reference update failed") must
 * not block the queue as a settings problem. Against the fake GitHub.
 */
import { Octokit } from '@octokit/rest';
import { buildTestBranch } from '../../src/adapters/github/test-branch.js';
import { landTestedCommit } from '../../src/adapters/github/land-tested-commit.js';
import type { RepoRef } from '../../src/domain/repo.js';
import type { MergeMethod } from '../../src/domain/queue-config.js';
import type { MergeRequest } from '../../src/ports/git-host.js';
import { isTransientHostError } from '../../src/ports/host-errors.js';
import { startFakeGitHub, type FakeGitHub, type FakeRepo } from '../support/fake-github/index.js';
import { recordingLog } from './github-fixtures.js';

const REF: RepoRef = { host: 'github.com', owner: 'acme', name: 'widgets' };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

let fake: FakeGitHub;
let repo: FakeRepo;
let client: Octokit;

beforeEach(async () => {
  fake = await startFakeGitHub({ defaultPermission: 'write' });
  repo = fake.createRepo('acme/widgets');
  client = new Octokit({ baseUrl: fake.baseUrl, auth: fake.installationToken('acme'), log: quiet, request: { retries: 0 } });
});

afterEach(async () => {
  await fake.close();
});

/** One PR, built for testing with `method`: the tested commit, and the request that lands it. */
async function testedPullRequest(method: MergeMethod): Promise<{ n: number; tested: string; merge: MergeRequest }> {
  const n = repo.openPullRequest({ title: 'Feature', commits: 2 });
  const headSha = repo.pullRequest(n).headSha;
  const base = repo.branch('main')!;
  const built = await buildTestBranch(client, REF, 'mq/main/run1', { queueId: 'q1', repo: REF, targetBranch: 'main', runId: 'run1', baseSha: base, heads: [{ prNumber: n, headSha }], mergeMethod: method });
  if (!built.ok) throw new Error('the fake could not build the run');
  return { n, tested: built.sha, merge: { repo: REF, targetBranch: 'main', runId: 'run1', expectedBaseSha: base, heads: [{ prNumber: n, headSha }], mergeMethod: method } };
}

/** The branch moved to the tested commit, as the lost attempt did; then someone pushed on top. */
async function landedThenPushedOver(tested: string): Promise<string> {
  await client.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { owner: 'acme', repo: 'widgets', ref: 'heads/main', sha: tested, force: false });
  return repo.push('main', { change: 'someone-else' });
}

const refUpdates = () => fake.requestsTo('git/update-ref').filter((r) => r.params.ref === 'heads/main' && r.status === 200);

describe('a landing asked again after it happened', () => {
  test('squash, its answer lost, a push since: ok, the PR closed once, the branch left where the push put it (no second landing)', async () => {
    const { n, tested, merge } = await testedPullRequest('squash');
    const pushed = await landedThenPushedOver(tested);

    const outcome = await landTestedCommit(client, merge, tested, recordingLog());

    expect(outcome).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.branch('main')).toBe(pushed);
    expect(repo.pullRequest(n).state).toBe('closed');
    expect(repo.comments(n).map((c) => c.body)).toEqual([expect.stringContaining(`squashed, in ${tested}`)]);
    expect(refUpdates()).toHaveLength(1);
    fake.assertNoViolations();
  });

  test('merge_commit (GitHub marked the PR merged as its head landed), a push since: ok, not pr_closed', async () => {
    const { n, tested, merge } = await testedPullRequest('merge_commit');
    await landedThenPushedOver(tested);
    expect(repo.pullRequest(n).merged).toBe(true);

    expect(await landTestedCommit(client, merge, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
    fake.assertNoViolations();
  });

  test('squash, its answer lost, the author pushed to the still-open PR since: ok (it landed), the PR left open, as its new commits did not land', async () => {
    const { n, tested, merge } = await testedPullRequest('squash');
    await client.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { owner: 'acme', repo: 'widgets', ref: 'heads/main', sha: tested, force: false });
    repo.pushToPullRequest(n);

    expect(await landTestedCommit(client, merge, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.branch('main')).toBe(tested);
    expect(repo.pullRequest(n).state).toBe('open');
    expect(repo.comments(n)).toEqual([]);
    expect(refUpdates()).toHaveLength(1);
    fake.assertNoViolations();
  });

  test('a batch landed, its answer lost, one PR pushed to since: ok, the other PR closed, the pushed one left open', async () => {
    const pushedTo = repo.openPullRequest({ title: 'First', commits: 1 });
    const other = repo.openPullRequest({ title: 'Second', commits: 1 });
    const heads = [pushedTo, other].map((n) => ({ prNumber: n, headSha: repo.pullRequest(n).headSha }));
    const base = repo.branch('main')!;
    const built = await buildTestBranch(client, REF, 'mq/main/run2', { queueId: 'q1', repo: REF, targetBranch: 'main', runId: 'run2', baseSha: base, heads, mergeMethod: 'squash' });
    if (!built.ok) throw new Error('the fake could not build the run');
    await client.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { owner: 'acme', repo: 'widgets', ref: 'heads/main', sha: built.sha, force: false });
    repo.pushToPullRequest(pushedTo);

    const merge: MergeRequest = { repo: REF, targetBranch: 'main', runId: 'run2', expectedBaseSha: base, heads, mergeMethod: 'squash' };
    expect(await landTestedCommit(client, merge, built.sha, recordingLog())).toEqual({ ok: true, newBaseSha: built.sha });
    expect(repo.pullRequest(other).state).toBe('closed');
    expect(repo.pullRequest(pushedTo).state).toBe('open');
    fake.assertNoViolations();
  });

  test('pushed to, nothing landed: still head_changed, and the branch is not moved', async () => {
    const { n, tested, merge } = await testedPullRequest('squash');
    const base = repo.branch('main');
    repo.pushToPullRequest(n);

    expect(await landTestedCommit(client, merge, tested, recordingLog())).toEqual({ ok: false, reason: 'head_changed' });
    expect(repo.branch('main')).toBe(base);
    fake.assertNoViolations();
  });

  test('a branch that moved without it is still base_moved (nothing landed)', async () => {
    const { n, tested, merge } = await testedPullRequest('squash');
    repo.push('main', { change: 'someone-else' });

    expect(await landTestedCommit(client, merge, tested, recordingLog())).toEqual({ ok: false, reason: 'base_moved' });
    expect(repo.pullRequest(n).state).toBe('open');
    fake.assertNoViolations();
  });
});

describe('closing the PRs after the landing', () => {
  test('refused (no permission to comment): the landing stands, ok, the PR still closed; the refusal is logged', async () => {
    const { n, tested, merge } = await testedPullRequest('squash');
    fake.failNext({ operationId: 'issues/create-comment', status: 403, message: 'Resource not accessible by integration' });
    const log = recordingLog();

    expect(await landTestedCommit(client, merge, tested, log)).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.branch('main')).toBe(tested);
    expect(repo.pullRequest(n).state).toBe('closed');
    expect(log.entries).toContainEqual(expect.objectContaining({ level: 'warn', message: 'could not comment on a landed pull request' }));
  });

  test('failing transiently (502): thrown for the outage back-off; the retry, after a push meanwhile, closes it and lands nothing twice', async () => {
    const { n, tested, merge } = await testedPullRequest('squash');
    fake.failNext({ operationId: 'pulls/update', status: 502, message: 'Server Error' });

    const failure = await landTestedCommit(client, merge, tested, recordingLog()).catch((error: unknown) => error);
    expect(isTransientHostError(failure)).toBe(true);
    expect(repo.pullRequest(n).state).toBe('open');
    const pushed = repo.push('main', { change: 'someone-else' });

    expect(await landTestedCommit(client, merge, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.branch('main')).toBe(pushed);
    expect(repo.pullRequest(n).state).toBe('closed');
    expect(refUpdates()).toHaveLength(1);
  });
});

describe('what GitHub answers while landing that is not a refusal', () => {
  test('a secondary rate limit (403, after Octokit\'s own retries): thrown as transient, so the runner backs off; not blocked', async () => {
    const { tested, merge } = await testedPullRequest('squash');
    fake.failNext({
      operationId: 'git/update-ref',
      status: 403,
      message: 'You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later.',
    });

    const failure = await landTestedCommit(client, merge, tested, recordingLog()).catch((error: unknown) => error);

    expect(failure).toMatchObject({ status: 403 });
    expect(isTransientHostError(failure)).toBe(true);
    expect(repo.branch('main')).not.toBe(tested);
  });

  test('"Reference update failed" (422) once: asked again, and it lands', async () => {
    const { tested, merge } = await testedPullRequest('squash');
    fake.failNext({ operationId: 'git/update-ref', status: 422, message: 'Reference update failed' });

    expect(await landTestedCommit(client, merge, tested, recordingLog(), { refUpdateRetryMs: 1 })).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.branch('main')).toBe(tested);
  });

  test('"Reference update failed" every time: blocked after a few attempts, with GitHub\'s words', async () => {
    const { tested, merge } = await testedPullRequest('squash');
    fake.failNext({ operationId: 'git/update-ref', status: 422, message: 'Reference update failed', times: 10 });

    const outcome = await landTestedCommit(client, merge, tested, recordingLog(), { refUpdateRetryMs: 1 });

    expect(outcome).toMatchObject({ ok: false, reason: 'blocked', message: expect.stringContaining('Reference update failed') });
    expect(fake.requestsTo('git/update-ref').filter((r) => r.params.ref === 'heads/main')).toHaveLength(3);
  });
});

// Found by review: the PRs were read before the branch moved and closed after it, whatever was pushed between.
test('a push to the PR while the branch moves: the tested head lands, the PR stays open and says its new commits did not', async () => {
  const { n, tested, merge } = await testedPullRequest('squash');
  let pushed: string | null = null;
  const racing = {
    request: async (route: string, parameters?: Record<string, unknown>) => {
      const answer = await client.request(route, parameters);
      if (route.startsWith('PATCH /repos/{owner}/{repo}/git/refs/') && !pushed) pushed = repo.pushToPullRequest(n);
      return answer;
    },
  };

  expect(await landTestedCommit(racing, merge, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });

  expect(repo.branch('main')).toBe(tested);
  expect(repo.pullRequest(n)).toMatchObject({ state: 'open', headSha: pushed });
  const said = repo.comments(n).map((c) => c.body);
  expect(said).toEqual([expect.stringContaining(`Commits pushed since (the head is now ${(pushed as unknown as string).slice(0, 7)}) did not land`)]);
});

test('no push meanwhile: the landed PR is closed with its comment', async () => {
  const { n, tested, merge } = await testedPullRequest('squash');
  expect(await landTestedCommit(client, merge, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
  expect(repo.pullRequest(n).state).toBe('closed');
  expect(repo.comments(n).map((c) => c.body)).toEqual([expect.stringContaining('so the queue closes it')]);
});
