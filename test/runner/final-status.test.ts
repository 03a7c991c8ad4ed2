/**
 * Whatever ends or restarts a PR under test, the host ends up showing the
 * PR's final queue state (on GitHub: the check run). The sandbox keeps the
 * last status the runner published on each PR, so these go through the real
 * runner, not through store writes.
 */
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { waitFor } from '../support/wait-for.js';

let h: ApiHarness;
let token: string;
beforeAll(async () => {
  h = await startApiHarness({ prefix: 'final_status', sandboxTimeScale: 0.02 });
  token = await h.tokenFor('demo', 'sandbox');
});
afterAll(() => h.close());

let repoCounter = 0;
const newRepo = () => ({ host: 'sandbox', owner: 'demo', name: `final${++repoCounter}` });

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body, token);
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

/** What the host shows on the PR now. */
const shown = async (repo: { host: string; owner: string; name: string }, n: number) => (await h.sandbox!.inspect(repo)).pullRequests[String(n)]?.queueStatus;

/** A queue with PR 1 under a long test run, shown as testing on the host. */
async function testing() {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 3600 });
  expect((await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } })).state).toBe('TESTING');
  await waitFor(() => shown(repo, 1), (s) => s?.state === 'TESTING');
  return repo;
}

test('a PR under test shows its forecast merge time on the host (a run of an hour: about an hour from its start); an ended one shows none', async () => {
  const repo = await testing();
  const status = await shown(repo, 1);
  const started = Date.parse((await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 1 } })).createdAt);
  // No run finished yet: the forecast assumes the default CI duration (10 minutes) from the run's start.
  expect(Date.parse(status?.estimatedMergeAt ?? '') - started).toBeGreaterThanOrEqual(9 * 60_000);
  expect(Date.parse(status?.estimatedMergeAt ?? '') - started).toBeLessThanOrEqual(11 * 60_000);
  const view = await ok('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(view.estimatedMergeAt).toBe(status?.estimatedMergeAt);
  await ok('/v1/cancelPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(await waitFor(() => shown(repo, 1), (s) => s?.state === 'CANCELLED')).not.toHaveProperty('estimatedMergeAt');
  expect(await ok('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } })).not.toHaveProperty('estimatedMergeAt');
});

test('cancel while testing: the host shows CANCELLED (user_requested)', async () => {
  const repo = await testing();
  expect((await ok('/v1/cancelPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } })).state).toBe('CANCELLED');
  expect(await waitFor(() => shown(repo, 1), (s) => s?.state !== 'TESTING')).toMatchObject({ state: 'CANCELLED', reason: 'user_requested' });
});

test('a push while testing: the host shows CANCELLED (pushed_to)', async () => {
  const repo = await testing();
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, push: true });
  expect(await waitFor(() => shown(repo, 1), (s) => s?.state !== 'TESTING')).toMatchObject({ state: 'CANCELLED', reason: 'pushed_to' });
});

test('closed while testing: the host shows CANCELLED (closed)', async () => {
  const repo = await testing();
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, open: false });
  expect(await waitFor(() => shown(repo, 1), (s) => s?.state !== 'TESTING')).toMatchObject({ state: 'CANCELLED', reason: 'closed' });
});

test('restart while testing: a new run, and the host shows TESTING again once it started', async () => {
  const repo = await testing();
  const first = await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect((await ok('/v1/restartTestsOnPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } })).state).toBe('TESTING');
  const second = await ok('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(second.testRunId).not.toBe(first.testRunId);
  expect(await shown(repo, 1)).toMatchObject({ state: 'TESTING' });
  // Then cancelled: the last word on the host is the cancellation, not the restart.
  await ok('/v1/cancelPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  expect(await waitFor(() => shown(repo, 1), (s) => s?.state !== 'TESTING')).toMatchObject({ state: 'CANCELLED', reason: 'user_requested' });
});
