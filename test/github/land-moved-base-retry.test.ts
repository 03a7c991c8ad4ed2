/**
 * A lane of a parallel queue lands on a branch another lane moved (landOnMovedBase): its PRs are put together on a
 * landing branch (mq-landing/<target>/<run>), which the target branch is then moved to. When that move fails
 * transiently (a 502, its answer lost) the runner asks the landing again (askedAgain), and the landing branch the
 * first attempt created is there already. Found by review: with reads answering from a lagging replica (the new
 * landing branch read as absent), the retry's create answered 422 "Reference already exists" and that was thrown,
 * which the runner takes for a refusal: the queue blocked. Now it is a race lost (BranchReadBehind), which the runner
 * asks again with back-off. Against the fake GitHub.
 */
import { Octokit } from '@octokit/rest';
import { BranchReadBehind, buildTestBranch } from '../../src/adapters/github/test-branch.js';
import { landTestedCommit } from '../../src/adapters/github/land-tested-commit.js';
import type { GitHubClient } from '../../src/adapters/github/github-client.js';
import type { RepoRef } from '../../src/domain/repo.js';
import type { MergeRequest } from '../../src/ports/git-host.js';
import { isHostContention, isTransientHostError } from '../../src/ports/host-errors.js';
import { startFakeGitHub, type FakeGitHub, type FakeRepo } from '../support/fake-github/index.js';
import { recordingLog } from './github-fixtures.js';

const REF: RepoRef = { host: 'github.com', owner: 'acme', name: 'widgets' };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
/** How long a read of a ref that just moved (or was just created) answers what it was before. */
const LAG_MS = 400;

let fake: FakeGitHub;
let repo: FakeRepo;
let client: Octokit;

async function start(staleRefReadsMs: number): Promise<void> {
  fake = await startFakeGitHub({ defaultPermission: 'write', staleRefReadsMs });
  repo = fake.createRepo('acme/widgets');
  client = new Octokit({ baseUrl: fake.baseUrl, auth: fake.installationToken('acme'), log: quiet, request: { retries: 0 } });
}

afterEach(async () => {
  await fake.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Two PRs tested apart on the same base (two lanes); the api lane has landed, so the web lane's tested commit is no
 * fast-forward any more. Waits out the lag, so the branches read as they are when the web lane starts landing.
 */
async function webLaneAfterApiLanded() {
  const web = repo.openPullRequest({ title: 'Web', commits: 1 });
  const api = repo.openPullRequest({ title: 'Api', commits: 1 });
  const base = repo.branch('main')!;
  const build = async (runId: string, n: number) => {
    const heads = [{ prNumber: n, headSha: repo.pullRequest(n).headSha }];
    const built = await buildTestBranch(client, REF, `mq/main/${runId}`, { queueId: 'q1', repo: REF, targetBranch: 'main', runId, baseSha: base, heads, mergeMethod: 'squash' });
    if (!built.ok) throw new Error('the fake could not build the run');
    return { tested: built.sha, request: (expectedBaseSha: string): MergeRequest => ({ repo: REF, targetBranch: 'main', runId, expectedBaseSha, heads, mergeMethod: 'squash' }) };
  };
  const apiRun = await build('r2', api);
  const webRun = await build('r1', web);
  expect(await landTestedCommit(client, apiRun.request(base), apiRun.tested, recordingLog())).toEqual({ ok: true, newBaseSha: apiRun.tested });
  await sleep(LAG_MS + 50);
  return { web, api, tested: webRun.tested, merge: webRun.request(apiRun.tested) };
}

/** Moves of main to something other than the tested commit: the landing of what the landing branch holds. */
function failingMoveOfMain(tested: string, when: 'before' | 'after'): GitHubClient {
  const plain: GitHubClient = client;
  let failed = false;
  return {
    request: async (route: string, parameters?: Record<string, unknown>) => {
      const landing = route === 'PATCH /repos/{owner}/{repo}/git/refs/{ref}' && parameters?.ref === 'heads/main' && parameters.sha !== tested;
      if (!landing || failed) return plain.request(route, parameters);
      failed = true;
      if (when === 'before') {
        fake.failNext({ operationId: 'git/update-ref', status: 502, message: 'Server Error' });
        return plain.request(route, parameters);
      }
      await plain.request(route, parameters);
      throw Object.assign(new Error('Bad gateway (the answer to a move that went through, lost)'), { status: 502 });
    },
  };
}

describe.each([
  ['reads current', 0],
  ['reads lagging', LAG_MS],
])('the moved-base landing fails transiently after its landing branch was created, then is asked again (%s)', (_, lag) => {
  test.each(['before', 'after'] as const)('the move of main failing %s it went through: asked again until reads catch up, the retry lands what the first attempt built, once', async (when) => {
    await start(lag);
    const { web, api, tested, merge } = await webLaneAfterApiLanded();

    const failure = await landTestedCommit(failingMoveOfMain(tested, when), merge, tested, recordingLog(), { refUpdateRetryMs: 250 }).catch((error: unknown) => error);
    expect(isTransientHostError(failure)).toBe(true);
    const built = repo.branch('mq-landing/main/r1');
    expect(built).toBeDefined();
    expect(repo.branch('main')).toBe(when === 'after' ? built : merge.expectedBaseSha);

    // At once: the landing branch was created just now. A read behind it is a race lost (the runner asks again with
    // back-off, quietly), not a refusal, which would stop the queue's landings.
    const again = { ...merge, askedAgain: true };
    const attempt = () => landTestedCommit(client, again, tested, recordingLog(), { refUpdateRetryMs: 100 }).catch((error: unknown) => error);
    let outcome = await attempt();
    if (outcome instanceof Error) {
      // Reads still behind after the landing's own re-reads: a race lost (BranchReadBehind), asked again later.
      expect(outcome).toBeInstanceOf(BranchReadBehind);
      expect(isHostContention(outcome)).toBe(true);
      await sleep(lag + 50);
      outcome = await attempt();
    }

    expect(outcome).toEqual({ ok: true, newBaseSha: built });
    expect(repo.branch('main')).toBe(built);
    expect(fake.pullRequestsIn(built!)).toEqual([api, web]);
    expect(repo.pullRequest(web).state).toBe('closed');
    expect(repo.comments(web).filter((c) => c.body.startsWith('Landed on'))).toHaveLength(1);
    expect(repo.branches().filter((b) => b.startsWith('mq-landing/'))).toEqual(['mq-landing/main/r1']);
    fake.assertNoViolations();
  });
});

/** The client, with reads of the landing branch answered 404 (a replica behind its creation) while `behind()`; `reads` counts them. */
function laggingLandingBranch(behind: () => boolean, reads = { count: 0 }): GitHubClient {
  const plain: GitHubClient = client;
  return {
    request: async (route, parameters) => {
      const landingRead = route === 'GET /repos/{owner}/{repo}/git/ref/{ref}' && parameters?.ref === 'heads/mq-landing/main/r1';
      if (landingRead) reads.count++;
      if (landingRead && behind()) {
        throw Object.assign(new Error('Not Found'), { status: 404 });
      }
      return plain.request(route, parameters);
    },
  };
}

// The lagging case above depends on timing (under load its reads may have caught up before the retry); this one
// does not: every read of the landing branch is behind during the first retry.
test('asked again after its move of main failed, the landing branch reading as absent throughout: a race lost (BranchReadBehind), not a refusal; reads caught up, it lands what the first attempt built, once', async () => {
  await start(0);
  const { web, api, tested, merge } = await webLaneAfterApiLanded();
  await landTestedCommit(failingMoveOfMain(tested, 'before'), merge, tested, recordingLog(), { refUpdateRetryMs: 1 }).catch(() => undefined);
  const built = repo.branch('mq-landing/main/r1')!;
  expect(repo.branch('main')).toBe(merge.expectedBaseSha);
  let behind = true;
  const again = { ...merge, askedAgain: true };

  const reads = { count: 0 };
  const first = await landTestedCommit(laggingLandingBranch(() => behind, reads), again, tested, recordingLog(), { refUpdateRetryMs: 1 }).catch((error: unknown) => error);
  expect(first).toBeInstanceOf(BranchReadBehind);
  // Once to find a landing (not again: main is where the engine expects it, so nothing of it landed), once after the create.
  expect(reads.count).toBe(2);
  expect(isHostContention(first)).toBe(true);
  expect(repo.branch('main')).toBe(merge.expectedBaseSha);
  behind = false;

  expect(await landTestedCommit(laggingLandingBranch(() => behind), again, tested, recordingLog(), { refUpdateRetryMs: 1 })).toEqual({ ok: true, newBaseSha: built });
  expect(repo.branch('main')).toBe(built);
  expect(fake.pullRequestsIn(built)).toEqual([api, web]);
  expect(repo.pullRequest(web).state).toBe('closed');
  expect(repo.comments(web).filter((c) => c.body.startsWith('Landed on'))).toHaveLength(1);
  expect(repo.branches().filter((b) => b.startsWith('mq-landing/'))).toEqual(['mq-landing/main/r1']);
  fake.assertNoViolations();
});

test('asked again after its move of main went through (answer lost), main reads current but the landing branch still reads as absent: it finds its landing, ok, not base_moved', async () => {
  await start(0);
  const { web, api, tested, merge } = await webLaneAfterApiLanded();
  await landTestedCommit(failingMoveOfMain(tested, 'after'), merge, tested, recordingLog(), { refUpdateRetryMs: 250 }).catch(() => undefined);
  const built = repo.branch('mq-landing/main/r1')!;
  expect(repo.branch('main')).toBe(built);
  // A replica behind the landing branch's creation answers the first read of it.
  const plain: GitHubClient = client;
  let lagging = 1;
  const laggingLanding: GitHubClient = {
    request: async (route, parameters) => {
      if (route === 'GET /repos/{owner}/{repo}/git/ref/{ref}' && parameters?.ref === 'heads/mq-landing/main/r1' && lagging-- > 0) {
        throw Object.assign(new Error('Not Found'), { status: 404 });
      }
      return plain.request(route, parameters);
    },
  };

  // Before, base_moved: the run was tested again on top of its own landing, which then landed an empty commit.
  expect(await landTestedCommit(laggingLanding, { ...merge, askedAgain: true }, tested, recordingLog(), { refUpdateRetryMs: 10 })).toEqual({ ok: true, newBaseSha: built });
  expect(repo.branch('main')).toBe(built);
  expect(fake.pullRequestsIn(built)).toEqual([api, web]);
  expect(repo.pullRequest(web).state).toBe('closed');
  expect(repo.comments(web).filter((c) => c.body.startsWith('Landed on'))).toHaveLength(1);
});

// GitHub's 422 "Reference update failed" (a race with another push; or a refusal, which says so every time) is asked
// again twice; a third in a row counts as a refusal. On this path that sends the run back to be tested (base_moved),
// as protection refusing untested commits does; it blocks nothing, and nothing lands.
test('the moved-base move of main answered "Reference update failed" three times in a row: base_moved, not blocked, nothing landed', async () => {
  await start(0);
  const { web, api, tested, merge } = await webLaneAfterApiLanded();
  const plain: GitHubClient = client;
  let injected = false;
  const racing: GitHubClient = {
    request: async (route, parameters) => {
      if (!injected && route === 'PATCH /repos/{owner}/{repo}/git/refs/{ref}' && parameters?.ref === 'heads/main' && parameters.sha !== tested) {
        injected = true;
        fake.failNext({ operationId: 'git/update-ref', status: 422, message: 'Reference update failed', times: 3 });
      }
      return plain.request(route, parameters);
    },
  };

  expect(await landTestedCommit(racing, merge, tested, recordingLog(), { refUpdateRetryMs: 1 })).toEqual({ ok: false, reason: 'base_moved' });
  expect(fake.requestsTo('git/update-ref').filter((r) => r.params.ref === 'heads/main' && r.status === 422)).toHaveLength(4); // not a fast-forward, then 3 × failed
  expect(fake.pullRequestsIn(repo.branch('main')!)).toEqual([api]);
  expect(repo.pullRequest(web).state).toBe('open');
});

// Found by review: the re-reads of the landing branch were guarded only by "main is not where the engine expects it",
// which a target branch read as absent (deleted, or a read behind) satisfies; nothing can have landed on no branch.
test('asked again while the target branch reads as absent: the landing branch is read once, not again; nothing landed (base_moved)', async () => {
  await start(0);
  const { merge, tested } = await webLaneAfterApiLanded();
  const plain: GitHubClient = client;
  const reads = { count: 0 };
  const mainAbsent: GitHubClient = {
    request: async (route, parameters) => {
      const read = route === 'GET /repos/{owner}/{repo}/git/ref/{ref}';
      if (read && parameters?.ref === 'heads/main') throw Object.assign(new Error('Not Found'), { status: 404 });
      if (read && parameters?.ref === 'heads/mq-landing/main/r1') reads.count++;
      return plain.request(route, parameters);
    },
  };

  const outcome = await landTestedCommit(mainAbsent, { ...merge, askedAgain: true }, tested, recordingLog(), { refUpdateRetryMs: 1 });

  expect(outcome).toEqual({ ok: false, reason: 'base_moved' });
  expect(reads.count).toBe(1);
  expect(repo.branches().filter((b) => b.startsWith('mq-landing/'))).toEqual([]);
  fake.assertNoViolations();
});
