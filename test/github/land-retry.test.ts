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
    // Told what landed: its tested head did, the commits since did not (before, the PR was left without a word).
    expect(repo.comments(n).map((c) => c.body)).toEqual([expect.stringMatching(/the head it tested, .*did not land, so the pull request stays open/s)]);
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

  // Found by review: every PR still open was closed, one moved to another branch as well (its life there ended).
  test('a batch landed, its answer lost, one PR retargeted to another branch since: ok, the other PR closed, the retargeted one left open and told why', async () => {
    const retargeted = repo.openPullRequest({ title: 'First', commits: 1 });
    const other = repo.openPullRequest({ title: 'Second', commits: 1 });
    const heads = [retargeted, other].map((n) => ({ prNumber: n, headSha: repo.pullRequest(n).headSha }));
    const base = repo.branch('main')!;
    const built = await buildTestBranch(client, REF, 'mq/main/run2', { queueId: 'q1', repo: REF, targetBranch: 'main', runId: 'run2', baseSha: base, heads, mergeMethod: 'squash' });
    if (!built.ok) throw new Error('the fake could not build the run');
    await client.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { owner: 'acme', repo: 'widgets', ref: 'heads/main', sha: built.sha, force: false });
    repo.push('release', { change: 'release-branch' });
    repo.editPullRequest(retargeted, { base: 'release' });

    const merge: MergeRequest = { repo: REF, targetBranch: 'main', runId: 'run2', expectedBaseSha: base, heads, mergeMethod: 'squash', askedAgain: true };
    expect(await landTestedCommit(client, merge, built.sha, recordingLog())).toEqual({ ok: true, newBaseSha: built.sha });
    expect(repo.pullRequest(other).state).toBe('closed');
    expect(repo.pullRequest(retargeted)).toMatchObject({ state: 'open', baseRef: 'release' });
    expect(repo.comments(retargeted).map((c) => c.body)).toEqual([expect.stringContaining('It targets `release` now, so the pull request stays open.')]);
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

  test('failing transiently (502): thrown for the outage back-off; the retry, after a push meanwhile, closes it, lands nothing twice and comments once', async () => {
    const { n, tested, merge } = await testedPullRequest('squash');
    fake.failNext({ operationId: 'pulls/update', status: 502, message: 'Server Error' });
    const landedComments = () => repo.comments(n).filter((c) => c.body.startsWith('Landed on'));

    const failure = await landTestedCommit(client, merge, tested, recordingLog()).catch((error: unknown) => error);
    expect(isTransientHostError(failure)).toBe(true);
    expect(repo.pullRequest(n).state).toBe('open');
    expect(landedComments()).toHaveLength(1);
    const pushed = repo.push('main', { change: 'someone-else' });

    expect(await landTestedCommit(client, merge, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.branch('main')).toBe(pushed);
    expect(repo.pullRequest(n).state).toBe('closed');
    expect(refUpdates()).toHaveLength(1);
    // Before, the retry posted its comment again.
    expect(landedComments()).toHaveLength(1);
  });

  test('the comment failing transiently each time it is asked: the failure goes up; the retry posts it (nothing was posted), once', async () => {
    const { n, tested, merge } = await testedPullRequest('squash');
    // As many times as the landing asks (makeOnce): then the runner asks the landing again.
    fake.failNext({ operationId: 'issues/create-comment', status: 502, message: 'Server Error', times: 4 });

    const failure = await landTestedCommit(client, merge, tested, recordingLog(), { refUpdateRetryMs: 1 }).catch((error: unknown) => error);
    expect(isTransientHostError(failure)).toBe(true);
    expect(repo.comments(n)).toHaveLength(0);

    expect(await landTestedCommit(client, merge, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.pullRequest(n).state).toBe('closed');
    expect(repo.comments(n).filter((c) => c.body.startsWith('Landed on'))).toHaveLength(1);
  });

  test('asked again while the branch still reads as before the landing (a lagging replica): the comment is not posted twice', async () => {
    await fake.close();
    fake = await startFakeGitHub({ defaultPermission: 'write', staleRefReadsMs: 5_000 });
    repo = fake.createRepo('acme/widgets');
    client = new Octokit({ baseUrl: fake.baseUrl, auth: fake.installationToken('acme'), log: quiet, request: { retries: 0 } });
    const { n, tested, merge } = await testedPullRequest('squash');
    fake.failNext({ operationId: 'pulls/update', status: 502, message: 'Server Error' });
    const failure = await landTestedCommit(client, merge, tested, recordingLog()).catch((error: unknown) => error);
    expect(isTransientHostError(failure)).toBe(true);

    // The read still answers the head before: the retry moves the branch where it already is, and closes the PR.
    expect(await landTestedCommit(client, { ...merge, askedAgain: true }, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.pullRequest(n).state).toBe('closed');
    expect(repo.comments(n).filter((c) => c.body.startsWith('Landed on'))).toHaveLength(1);
  });

  test("a person's comment holding the marker does not stand for the queue's: the retry still comments", async () => {
    const { n, tested, merge } = await testedPullRequest('squash');
    fake.failNext({ operationId: 'issues/create-comment', status: 502, message: 'Server Error' });
    await landTestedCommit(client, merge, tested, recordingLog()).catch(() => undefined);
    repo.comment(n, '<!-- merge-queue: landed run run1 -->', 'mallory');

    expect(await landTestedCommit(client, merge, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.comments(n).filter((c) => c.body.startsWith('Landed on'))).toHaveLength(1);
  });

  test('a long discussion is not read whole: the retry lists only comments since the run started (GitHub\'s `since`), one page, and still finds its own', async () => {
    await fake.close();
    let clock = Date.parse('2026-11-01T09:00:00Z');
    fake = await startFakeGitHub({ defaultPermission: 'write', now: () => new Date(clock) });
    repo = fake.createRepo('acme/widgets');
    client = new Octokit({ baseUrl: fake.baseUrl, auth: fake.installationToken('acme'), log: quiet, request: { retries: 0 } });
    const { n, tested, merge } = await testedPullRequest('squash');
    for (let i = 0; i < 250; i++) repo.comment(n, `review note ${i}`, 'alice');
    clock += 20 * 60_000; // The run starts 20 minutes after the discussion, and lands after its CI.
    const runStartedAt = new Date(clock);
    clock += 30 * 60_000;
    fake.failNext({ operationId: 'pulls/update', status: 502, message: 'Server Error' });
    await landTestedCommit(client, { ...merge, runStartedAt }, tested, recordingLog()).catch(() => undefined);

    expect(await landTestedCommit(client, { ...merge, runStartedAt, askedAgain: true }, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.comments(n).filter((c) => c.body.startsWith('Landed on'))).toHaveLength(1);
    const listed = fake.requestsTo('issues/list-comments');
    expect(listed).toHaveLength(1);
    expect(listed[0]?.query.since).toBe('2026-11-01T09:10:00Z'); // the run's start, less the margin for clocks
  });

  test('the first attempt said "the queue closes it", then the author pushed: the retry leaves the PR open and says so too', async () => {
    const { n, tested, merge } = await testedPullRequest('squash');
    fake.failNext({ operationId: 'pulls/update', status: 502, message: 'Server Error' });
    await landTestedCommit(client, merge, tested, recordingLog()).catch(() => undefined);
    const landedComments = () => repo.comments(n).filter((c) => c.body.startsWith('Landed on'));
    expect(landedComments().map((c) => c.body)).toEqual([expect.stringMatching(/so the queue closes it/)]);
    repo.pushToPullRequest(n);

    expect(await landTestedCommit(client, { ...merge, askedAgain: true }, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.pullRequest(n).state).toBe('open');
    // Before, the first comment's marker silenced this one: the PR stayed open under "the queue closes it".
    expect(landedComments().map((c) => c.body)).toEqual([expect.stringMatching(/so the queue closes it/), expect.stringMatching(/did not land, so the pull request stays open/)]);
  });

  // Found by review: before the two markers the "stays open" text carried the one marker; a retry after an upgrade read
  // it as the closing text and said "stays open" a second time.
  test('a "stays open" comment from before the two markers (it carried the one marker): the retry does not say it again', async () => {
    const { n, tested, merge } = await testedPullRequest('squash');
    await client.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { owner: 'acme', repo: 'widgets', ref: 'heads/main', sha: tested, force: false });
    repo.pushToPullRequest(n);
    repo.comment(n, 'Landed on `main` by the merge queue, squashed, in abc1234: the head it tested. Commits pushed since did not land, so the pull request stays open.\n\n<!-- merge-queue: landed run run1 -->', 'merge-queue[bot]');

    expect(await landTestedCommit(client, { ...merge, askedAgain: true }, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.pullRequest(n).state).toBe('open');
    expect(repo.comments(n).filter((c) => c.body.startsWith('Landed on'))).toHaveLength(1);
  });

  test('a first landing does not read the comments (nothing can be there yet): no request spent', async () => {
    const { n, tested, merge } = await testedPullRequest('squash');
    expect(await landTestedCommit(client, merge, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
    expect(repo.comments(n)).toHaveLength(1);
    expect(fake.requestsTo('issues/list-comments')).toHaveLength(0);
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

test('the PR retargeted to another branch while the branch moves: the tested head lands, the PR stays open and says why', async () => {
  const { n, tested, merge } = await testedPullRequest('squash');
  repo.push('release', { change: 'release-branch' });
  let moved = false;
  const racing = {
    request: async (route: string, parameters?: Record<string, unknown>) => {
      const answer = await client.request(route, parameters);
      if (route.startsWith('PATCH /repos/{owner}/{repo}/git/refs/') && !moved) {
        moved = true;
        repo.editPullRequest(n, { base: 'release' });
      }
      return answer;
    },
  };

  expect(await landTestedCommit(racing, merge, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });

  expect(repo.branch('main')).toBe(tested);
  expect(repo.pullRequest(n)).toMatchObject({ state: 'open', baseRef: 'release' });
  expect(repo.comments(n).map((c) => c.body)).toEqual([expect.stringContaining('It targets `release` now, so the pull request stays open.')]);
});

test('no push meanwhile: the landed PR is closed with its comment', async () => {
  const { n, tested, merge } = await testedPullRequest('squash');
  expect(await landTestedCommit(client, merge, tested, recordingLog())).toEqual({ ok: true, newBaseSha: tested });
  expect(repo.pullRequest(n).state).toBe('closed');
  expect(repo.comments(n).map((c) => c.body)).toEqual([expect.stringContaining('so the queue closes it')]);
});

describe('a lane of a parallel queue landing after another lane moved the branch (found by review: refused and tested again without end)', () => {
  /** Two PRs tested apart on the same base (two lanes), each with its landing request. */
  async function twoLanes(method: MergeMethod) {
    const web = repo.openPullRequest({ title: 'Web', commits: 1 });
    const api = repo.openPullRequest({ title: 'Api', commits: 1 });
    const base = repo.branch('main')!;
    const build = async (runId: string, n: number) => {
      const heads = [{ prNumber: n, headSha: repo.pullRequest(n).headSha }];
      const built = await buildTestBranch(client, REF, `mq/main/${runId}`, { queueId: 'q1', repo: REF, targetBranch: 'main', runId, baseSha: base, heads, mergeMethod: method });
      if (!built.ok) throw new Error('the fake could not build the run');
      return { tested: built.sha, request: (expectedBaseSha: string): MergeRequest => ({ repo: REF, targetBranch: 'main', runId, expectedBaseSha, heads, mergeMethod: method }) };
    };
    return { web, api, base, apiRun: await build('r2', api), webRun: await build('r1', web) };
  }

  test.each(['squash', 'merge_commit'] as const)('%s: its PRs land on the branch as it is, once, and a landing asked again answers the same', async (method) => {
    const { web, api, base, apiRun, webRun } = await twoLanes(method);
    expect(await landTestedCommit(client, apiRun.request(base), apiRun.tested, recordingLog())).toEqual({ ok: true, newBaseSha: apiRun.tested });

    const outcome = await landTestedCommit(client, webRun.request(apiRun.tested), webRun.tested, recordingLog());

    expect(outcome).toEqual({ ok: true, newBaseSha: repo.branch('main') });
    expect(fake.pullRequestsIn(repo.branch('main')!).sort()).toEqual([web, api].sort());
    if (method === 'squash') expect(repo.pullRequest(web).state).toBe('closed');
    // Its landing branch (outside mq/**: no CI) stays until the next such landing: by it a landing asked again knows.
    expect(repo.branches().filter((b) => b.startsWith('mq-landing/'))).toEqual(['mq-landing/main/r1']);
    const updates = refUpdates().length;
    // Asked again (its answer lost): the same answer, and the branch does not move twice.
    expect(await landTestedCommit(client, webRun.request(apiRun.tested), webRun.tested, recordingLog())).toEqual(outcome);
    expect(refUpdates()).toHaveLength(updates);
  });

  test("the next such landing deletes the earlier one's landing branch", async () => {
    const { base, apiRun, webRun } = await twoLanes('squash');
    const docs = repo.openPullRequest({ title: 'Docs', commits: 1 });
    const docsHeads = [{ prNumber: docs, headSha: repo.pullRequest(docs).headSha }];
    const docsBuilt = await buildTestBranch(client, REF, 'mq/main/r3', { queueId: 'q1', repo: REF, targetBranch: 'main', runId: 'r3', baseSha: base, heads: docsHeads, mergeMethod: 'squash' });
    if (!docsBuilt.ok) throw new Error('the fake could not build the run');
    await landTestedCommit(client, apiRun.request(base), apiRun.tested, recordingLog());
    await landTestedCommit(client, webRun.request(apiRun.tested), webRun.tested, recordingLog());
    const docsRequest: MergeRequest = { repo: REF, targetBranch: 'main', runId: 'r3', expectedBaseSha: repo.branch('main')!, heads: docsHeads, mergeMethod: 'squash' };

    expect(await landTestedCommit(client, docsRequest, docsBuilt.sha, recordingLog())).toMatchObject({ ok: true });
    expect(repo.branches().filter((b) => b.startsWith('mq-landing/'))).toEqual(['mq-landing/main/r3']);
    expect(fake.pullRequestsIn(repo.branch('main')!)).toHaveLength(3);
  });

  test('its answer lost before the PRs were closed: asked again, it finds its landing and closes them, the branch moved once', async () => {
    const { web, base, apiRun, webRun } = await twoLanes('squash');
    await landTestedCommit(client, apiRun.request(base), apiRun.tested, recordingLog());
    fake.failNext({ operationId: 'issues/create-comment', status: 502, message: 'Bad gateway', times: 4 });
    await expect(landTestedCommit(client, webRun.request(apiRun.tested), webRun.tested, recordingLog(), { refUpdateRetryMs: 1 })).rejects.toMatchObject({ status: 502 });
    const landedAt = repo.branch('main');
    const updates = refUpdates().length;

    expect(await landTestedCommit(client, webRun.request(apiRun.tested), webRun.tested, recordingLog())).toEqual({ ok: true, newBaseSha: landedAt });
    expect(refUpdates()).toHaveLength(updates);
    expect(repo.pullRequest(web).state).toBe('closed');
  });

  test('a conflict with what the other lane landed: base_moved, nothing landed (tested again on the branch as it is)', async () => {
    const { web, api, base, apiRun, webRun } = await twoLanes('squash');
    repo.declareConflict(web, api);
    await landTestedCommit(client, apiRun.request(base), apiRun.tested, recordingLog());

    expect(await landTestedCommit(client, webRun.request(apiRun.tested), webRun.tested, recordingLog())).toEqual({ ok: false, reason: 'base_moved' });
    expect(repo.branch('main')).toBe(apiRun.tested);
    expect(repo.pullRequest(web).state).toBe('open');
  });

  test("protection requiring checks on what the branch takes: base_moved (tested again there), not a block, and nothing landed", async () => {
    const { web, api, base, apiRun, webRun } = await twoLanes('squash');
    await landTestedCommit(client, apiRun.request(base), apiRun.tested, recordingLog());
    repo.protectBranch('main', { requiredChecks: ['ci'] });

    // The engine learns that the branch takes only tested commits (engine/lands-only-tested.test.ts).
    expect(await landTestedCommit(client, webRun.request(apiRun.tested), webRun.tested, recordingLog())).toEqual({ ok: false, reason: 'base_moved', onlyTested: true });
    expect(fake.pullRequestsIn(repo.branch('main')!)).toEqual([api]);
    expect(repo.pullRequest(web).state).toBe('open');
  });

  // Found by review: the refusal escaped as one of the target branch ("the host refused to land the tested commit").
  test('a rule on the staging branch refusing to put the PRs together on the moved branch: blocked, naming the queue\'s branches; nothing landed', async () => {
    const { web, api, base, apiRun, webRun } = await twoLanes('squash');
    await landTestedCommit(client, apiRun.request(base), apiRun.tested, recordingLog());
    repo.protectBranch('mq-staging/main', { requiredApprovals: 0, allowForcePushes: true });

    const outcome = await landTestedCommit(client, webRun.request(apiRun.tested), webRun.tested, recordingLog());
    expect(outcome).toEqual({ ok: false, reason: 'blocked', message: expect.stringMatching(/put the run's PRs together on main[\s\S]*mq-staging\/main[\s\S]*Let the App create and force-push/) });
    expect(fake.pullRequestsIn(repo.branch('main')!)).toEqual([api]);
    expect(repo.pullRequest(web).state).toBe('open');
  });

  test('the branch is not where the queue expects it: base_moved, nothing built on it', async () => {
    const { api, base, apiRun, webRun } = await twoLanes('squash');
    await landTestedCommit(client, apiRun.request(base), apiRun.tested, recordingLog());
    repo.push('main', { change: 'someone-else' });

    expect(await landTestedCommit(client, webRun.request(apiRun.tested), webRun.tested, recordingLog())).toEqual({ ok: false, reason: 'base_moved' });
    expect(fake.pullRequestsIn(repo.branch('main')!)).toEqual([api]);
  });
});

describe('a branch reset by hand to a head the queue replaced (found by review: the next landing brought back what the reset took off)', () => {
  test('the tested commit still builds on the reset head: base_moved, the branch is not moved', async () => {
    const first = await testedPullRequest('merge_commit');
    expect(await landTestedCommit(client, first.merge, first.tested, recordingLog())).toEqual({ ok: true, newBaseSha: first.tested });
    const before = first.merge.expectedBaseSha;
    // A second PR tested on top of the first's landing; then an operator rolls the branch back past the first.
    const n = repo.openPullRequest({ title: 'Second', commits: 1 });
    const heads = [{ prNumber: n, headSha: repo.pullRequest(n).headSha }];
    const built = await buildTestBranch(client, REF, 'mq/main/run2', { queueId: 'q1', repo: REF, targetBranch: 'main', runId: 'run2', baseSha: first.tested, heads, mergeMethod: 'merge_commit' });
    if (!built.ok) throw new Error('the fake could not build the run');
    repo.resetBranch('main', before);

    const outcome = await landTestedCommit(client, { repo: REF, targetBranch: 'main', runId: 'run2', expectedBaseSha: first.tested, heads, mergeMethod: 'merge_commit' }, built.sha, recordingLog(), { refUpdateRetryMs: 5 });

    expect(outcome).toEqual({ ok: false, reason: 'base_moved' });
    expect(repo.branch('main')).toBe(before);
    expect(fake.pullRequestsIn(before)).not.toContain(first.n);
    expect(refUpdates()).toHaveLength(1); // the first landing only
    fake.assertNoViolations();
  });

  test('a read right after the last landing that still answers the head before it (a lagging replica) is read again: the run lands, not sent back', async () => {
    await fake.close();
    fake = await startFakeGitHub({ defaultPermission: 'write', staleRefReadsMs: 400 });
    repo = fake.createRepo('acme/widgets');
    client = new Octokit({ baseUrl: fake.baseUrl, auth: fake.installationToken('acme'), log: quiet, request: { retries: 0 } });
    const first = await testedPullRequest('merge_commit');
    const n = repo.openPullRequest({ title: 'Second', commits: 1 });
    const heads = [{ prNumber: n, headSha: repo.pullRequest(n).headSha }];
    const built = await buildTestBranch(client, REF, 'mq/main/run2', { queueId: 'q1', repo: REF, targetBranch: 'main', runId: 'run2', baseSha: first.tested, heads, mergeMethod: 'merge_commit' });
    if (!built.ok) throw new Error('the fake could not build the run');
    await new Promise((resolve) => setTimeout(resolve, 450)); // the branches built above read as they are
    expect(await landTestedCommit(client, first.merge, first.tested, recordingLog())).toEqual({ ok: true, newBaseSha: first.tested });
    // At once: the first read of main still answers the head before the landing.
    const second = { repo: REF, targetBranch: 'main', runId: 'run2', expectedBaseSha: first.tested, heads, mergeMethod: 'merge_commit' as const };

    expect(await landTestedCommit(client, second, built.sha, recordingLog(), { refUpdateRetryMs: 250 })).toEqual({ ok: true, newBaseSha: built.sha });
    expect(repo.branch('main')).toBe(built.sha);
    expect(fake.requestsTo('git/get-ref').filter((r) => r.params.ref === 'heads/main').length).toBeGreaterThan(2);
    fake.assertNoViolations();
  });
});
