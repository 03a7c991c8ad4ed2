/**
 * The queue end to end through the v1 API alone, on the sandbox host: PRs flow
 * NOT_READY → PENDING → TESTING → TESTS_PASSED → MERGED, or FAILED with a reason.
 * Sandbox CI durations are scaled down (1 simulated second = 20 ms).
 */
import type { GitHost } from '../../src/ports/git-host.js';
import type { OutgoingEvent } from '../../src/ports/webhook-outbox.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { waitFor } from '../support/wait-for.js';

let h: ApiHarness;
let token: string;
beforeAll(async () => {
  h = await startApiHarness({ prefix: 'sandbox', sandboxTimeScale: 0.02 });
  token = await h.tokenFor('demo', 'sandbox');
});
afterAll(() => h.close());

let repoCounter = 0;
function newRepo() {
  return { host: 'sandbox', owner: 'demo', name: `repo${++repoCounter}` };
}

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body, token);
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

async function prState(repo: object, number: number, includeTimeline = false) {
  return ok('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number }, includeTimeline });
}

test('a passing PR flows to MERGED, and the timeline shows every step with its reason', async () => {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, title: 'Add feature', ciSeconds: 5 });
  const submitted = await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(submitted).toMatchObject({ state: 'TESTING', prTitle: 'Add feature', readiness: { gitHubMergeability: 'mergeable', doesBaseBranchMatch: true } });

  const merged = await waitFor(() => prState(repo, 1, true), (pr) => pr.state === 'MERGED');
  expect(merged.timeline.map((t: { state: string; reason: string }) => `${t.state}:${t.reason}`).reverse()).toEqual([
    'NOT_READY:submitted',
    'PENDING:ready',
    'TESTING:test_started',
    'TESTS_PASSED:tests_passed',
    'MERGED:merged',
  ]);
  const details = await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(details).toMatchObject({ status: 'succeeded', testedPullRequests: [{ prNumber: 1, title: 'Add feature' }] });
  expect(details.testBranch).toMatch(/^mq\/main\//);
  const sandbox = await ok('/sandbox/getRepository', { repo });
  expect(sandbox.pullRequests['1']).toMatchObject({ merged: true, open: false, queueStatus: { state: 'MERGED', reason: 'merged' } });
  expect(sandbox.branches.main).toBe(details.testBranchSha);
});

test('a breaking PR is FAILED with failed_tests and the failing check; the PR behind it merges', async () => {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main', concurrency: 2 });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, outcome: 'fail', ciSeconds: 5 });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 2 }, ciSeconds: 5 });
  await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 2 } });

  const failed = await waitFor(() => prState(repo, 1, true), (pr) => pr.state === 'FAILED');
  expect(failed.timeline[0]).toMatchObject({ state: 'FAILED', reason: 'failed_tests', detail: 'sandbox-ci (#1)' });
  const merged = await waitFor(() => prState(repo, 2), (pr) => pr.state === 'MERGED');
  expect(merged.isCurrentlySubmittedToQueue).toBe(false);
});

test('a batch of three with one culprit: bisection finds it, the two innocent PRs merge', async () => {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/v1/updateQueue', { repo, targetBranch: 'main', batch: true, batchingMinSize: 3, batchingMaxWaitTimeMinutes: 10 });
  for (const number of [1, 2, 3]) await ok('/sandbox/updatePullRequest', { repo, pr: { number }, ciSeconds: 3, outcome: number === 2 ? 'fail' : 'pass' });
  for (const number of [1, 2, 3]) await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number } });

  const states = await waitFor(
    async () => Promise.all([1, 2, 3].map(async (n) => (await prState(repo, n)).state)),
    (s) => s.every((state) => ['MERGED', 'FAILED'].includes(state)),
  );
  expect(states).toEqual(['MERGED', 'FAILED', 'MERGED']);
});

test('cancelling a PR under test stops its run; a push to a queued PR cancels it with pushed_to', async () => {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 600 });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 2 }, ciSeconds: 600 });
  await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 2 } });
  const cancelled = await ok('/v1/cancelPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(cancelled.state).toBe('CANCELLED');
  const details = await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(details.status).toBe('cancelled');
  expect((await prState(repo, 2)).state).toBe('TESTING');

  // The host's change reaches the queue through its runner, after the sandbox answered.
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 2 }, push: true });
  const pushed = await waitFor(() => prState(repo, 2, true), (pr) => pr.state !== 'TESTING');
  expect(pushed.timeline[0]).toMatchObject({ state: 'CANCELLED', reason: 'pushed_to' });
});

test('a mode change while a run is in flight is SWITCHING_MODES until it ends; config writes meanwhile are 409', async () => {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 10 });
  await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  const switching = await ok('/v1/updateQueue', { repo, targetBranch: 'main', mode: 'parallel' });
  expect(switching).toMatchObject({ state: 'SWITCHING_MODES', mode: 'parallel' });
  expect((await h.post('/v1/updateQueue', { repo, targetBranch: 'main', concurrency: 3 }, token)).statusCode).toBe(409);
  const done = await waitFor(() => ok('/v1/getQueue', { repo, targetBranch: 'main' }), (q) => q.state === 'RUNNING');
  expect(done.mode).toBe('parallel');
});

test('a pause during a mode switch holds the passed PR and the switch; resumed, it lands what was tested, then switches', async () => {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 50 });
  await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  const tested = await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(await ok('/v1/updateQueue', { repo, targetBranch: 'main', mode: 'parallel' })).toMatchObject({ state: 'SWITCHING_MODES' });
  expect(await ok('/v1/updateQueue', { repo, targetBranch: 'main', state: 'PAUSED' })).toMatchObject({ state: 'PAUSED', mode: 'parallel' });

  // The run passes while paused: nothing lands, and the switch waits for the passed run (ended now, the parallel
  // mode would drop it and want the PR's impacted targets first).
  await waitFor(() => prState(repo, 1), (pr) => pr.state === 'TESTS_PASSED');
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect((await prState(repo, 1)).state).toBe('TESTS_PASSED');
  expect((await h.runner?.engineState((await ok('/v1/getQueue', { repo, targetBranch: 'main' })).id as string))?.switchingToMode).toBe('parallel');

  await ok('/v1/updateQueue', { repo, targetBranch: 'main', state: 'RUNNING' });
  await waitFor(() => prState(repo, 1), (pr) => pr.state === 'MERGED');
  const landed = await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(landed.testRunId).toBe(tested.testRunId);
  await waitFor(() => ok('/v1/getQueue', { repo, targetBranch: 'main' }), (q) => q.state === 'RUNNING' && q.mode === 'parallel');
});

test('a push to the target branch from outside the queue rebuilds the run on the new base', async () => {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 20 });
  await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  const before = await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 1 } });
  const { sha } = await ok('/sandbox/pushToBranch', { repo, branch: 'main' });
  const after = await waitFor(() => ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 1 } }), (d) => d.testRunId !== before.testRunId);
  expect(after.baseSha).toBe(sha);
  await waitFor(() => prState(repo, 1), (pr) => pr.state === 'MERGED');
});

test('restarting a PR under test re-runs its tests in a new run, in the same place', async () => {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 600 });
  await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  const first = await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 1 } });
  const restarted = await ok('/v1/restartTestsOnPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(restarted.state).toBe('TESTING');
  const second = await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(second.testRunId).not.toBe(first.testRunId);
  expect(second.status).toBe('in_progress');
  const old = await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', testRunId: first.testRunId });
  expect(old.status).toBe('cancelled');
  const timeline = (await prState(repo, 1, true)).timeline;
  expect(timeline[0]).toMatchObject({ state: 'TESTING', reason: 'restart_requested' });
});

test('the runner survives a restart mid-run: a new runner on the same database finishes the work', async () => {
  const first = await startApiHarness({ prefix: 'restart', sandboxTimeScale: 0.02 });
  const firstToken = await first.tokenFor('demo', 'sandbox');
  const repo = newRepo();
  const post = async (h2: ApiHarness, path: string, body: unknown) => (await h2.post(path, body, firstToken)).json();
  await post(first, '/v1/createQueue', { repo, targetBranch: 'main' });
  await post(first, '/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 5 });
  expect((await post(first, '/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } })).state).toBe('TESTING');
  // The first service "dies": its runner stops and its CI job is lost with it.
  await first.app.queueRunner.stop();
  const second = await startApiHarness({ sandboxTimeScale: 0.02, database: first.database });
  try {
    const merged = await waitFor(
      () => post(second, '/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } }),
      (pr) => pr.state === 'MERGED',
    );
    expect(merged.state).toBe('MERGED');
  } finally {
    await second.close({ keepDatabase: true });
    await first.close({ keepServer: true });
  }
});

test('a PR that is not ready says why, and is admitted once it is', async () => {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main', mode: 'parallel' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, draft: true, ciSeconds: 2 });
  expect(await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } })).toMatchObject({ state: 'NOT_READY', notReadyReason: 'draft' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, draft: false });
  const waiting = await waitFor(() => prState(repo, 1), (pr) => pr.notReadyReason !== 'draft');
  expect(waiting).toMatchObject({ state: 'NOT_READY', notReadyReason: 'awaiting_impacted_targets', readiness: { requiresImpactedTargets: true, hasImpactedTargets: false } });
  await ok('/v1/setImpactedTargets', { repo, targetBranch: 'main', pr: { number: 1, sha: waiting.prSha }, impactedTargets: ['//app'] });
  const admitted = await prState(repo, 1);
  expect(admitted.state).toBe('TESTING');
  expect(admitted.notReadyReason).toBeUndefined();
  await waitFor(() => prState(repo, 1), (pr) => pr.state === 'MERGED');
});

test('a PR whose mergeability the host is still computing is read again until it is known', async () => {
  let answers = 0;
  const computing: GitHost = {
    async readPullRequest(_repo, prNumber) {
      answers++;
      return { title: `PR ${prNumber}`, author: 'a', headSha: 'abc1234', baseBranch: 'main', open: true, draft: false, merged: false, mergeability: answers < 3 ? 'in_progress' : 'mergeable', readAt: new Date() };
    },
    readBranchHead: async () => null, // No base known: admission is all this test looks at.
    startTestRun: async () => ({ ok: true, testBranch: 'x', testBranchSha: null }),
    cancelTestRun: async () => undefined,
    merge: async () => ({ ok: false, reason: 'blocked', message: 'unused' }),
    reportPullRequestStatus: async () => undefined,
  };
  const own = await startApiHarness({ sandboxTimeScale: 0.02, hosts: { 'lazy.example': computing }, prefix: 'lazy' });
  try {
    const ownToken = await own.tokenFor('acme', 'lazy.example');
    const repo = { host: 'lazy.example', owner: 'acme', name: 'r' };
    await own.post('/v1/createQueue', { repo, targetBranch: 'main' }, ownToken);
    // A remote host is not read inside the request: the answer knows nothing yet, the runner reads it next.
    const submitted = (await own.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 7 } }, ownToken)).json();
    expect(submitted).toMatchObject({ state: 'NOT_READY', notReadyReason: 'unknown_to_host', readiness: { gitHubMergeability: 'unspecified' } });
    const read = () => own.post('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: 7 } }, ownToken).then((r) => r.json());
    const computing = await waitFor(read, (pr) => pr.readiness.gitHubMergeability !== 'unspecified');
    expect(computing).toMatchObject({ state: 'NOT_READY', notReadyReason: 'awaiting_mergeability', readiness: { gitHubMergeability: 'in_progress' } });
    await own.maintenance?.round();
    await own.maintenance?.round();
    const later = await waitFor(read, (pr) => pr.state !== 'NOT_READY');
    expect(later).toMatchObject({ state: 'PENDING', readiness: { gitHubMergeability: 'mergeable' } });
  } finally {
    await own.close({ keepServer: true });
  }
});

test('the engine’s events go out as webhook events, in order per PR, with stable ids and the supplement’s payload', async () => {
  const published: OutgoingEvent[] = [];
  const own = await startApiHarness({ sandboxTimeScale: 0.02, prefix: 'events', outbox: { publish: async (...events) => void published.push(...events) } });
  try {
    const ownToken = await own.tokenFor('demo', 'sandbox');
    const repo = { host: 'sandbox', owner: 'demo', name: 'events' };
    await own.post('/v1/createQueue', { repo, targetBranch: 'main' }, ownToken);
    await own.post('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, author: 'alice', ciSeconds: 2 }, ownToken);
    await own.post('/sandbox/updatePullRequest', { repo, pr: { number: 2 }, outcome: 'fail', ciSeconds: 2 }, ownToken);
    await own.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } }, ownToken);
    await own.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 2 } }, ownToken);
    await waitFor(async () => published.map((e) => e.payload.type), (types) => types.includes('pull_request.merged') && types.includes('pull_request.failed'));
    const forPr = (n: number) => published.filter((e) => e.payload.pr_number === n);
    expect(forPr(1).map((e) => e.payload.type)).toEqual(['pull_request.submitted', 'pull_request.queued', 'pull_request.testing', 'pull_request.merged']);
    expect(forPr(2).map((e) => e.payload.type)).toEqual(['pull_request.submitted', 'pull_request.queued', 'pull_request.testing', 'pull_request.failed']);
    for (const n of [1, 2]) {
      const sequences = forPr(n).map((e) => e.sequence);
      expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    }
    expect(new Set(published.map((e) => e.id)).size).toBe(published.length);
    const merged = forPr(1).at(-1)!;
    expect(merged.payload).toMatchObject({ repository: repo, target_branch: 'main', pr_number: 1, author: 'alice', batched: false, is_bisection: false });
    expect(merged.payload.test_branch).toMatch(/^mq\/main\//);
    expect(forPr(2).at(-1)!.payload.failure_reason).toBe('failed_tests');
  } finally {
    await own.close({ keepServer: true });
  }
});

test('direct merge on the sandbox: an up-to-date passing PR lands without a test run; one behind the branch is tested', async () => {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/v1/updateQueue', { repo, targetBranch: 'main', directMergeMode: 'always' });
  // ciSeconds of an hour: only a run that spends no CI can merge within the test.
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 3600, upToDate: true });
  await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  await waitFor(() => prState(repo, 1), (pr) => pr.state === 'MERGED');
  const details = await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(details.landedWithoutCi).toMatch(/up to date with main/);

  // #2 was never brought up to date with the branch: it gets a real run (5 s of CI, scaled).
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 2 }, ciSeconds: 5 });
  await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 2 } });
  await waitFor(() => prState(repo, 2), (pr) => pr.state === 'MERGED');
  expect((await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 2 } })).landedWithoutCi).toBeUndefined();
});
