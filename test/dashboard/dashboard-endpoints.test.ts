/**
 * The dashboard's reads through the v1 API on the sandbox: the organization's
 * queues, a queue's board (runs in flight as a chain, waiting PRs with forecast
 * merge times in order, ended PRs with reasons) and its health.
 */
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { waitFor } from '../support/wait-for.js';

let h: ApiHarness;
let token: string;
beforeAll(async () => {
  h = await startApiHarness({ prefix: 'dashboard', sandboxTimeScale: 0.02 });
  token = await h.tokenFor('demo', 'sandbox');
});
afterAll(() => h.close());

async function ok(path: string, body: unknown, as = token) {
  const res = await h.post(path, body, as);
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

const repo = { host: 'sandbox', owner: 'demo', name: 'board' };
const queue = { repo, targetBranch: 'main' };

test('the board: a chain of runs in flight, waiting PRs with forecasts in queue order, NOT_READY ones with reasons', async () => {
  await ok('/v1/createQueue', { ...queue, concurrency: 2 });
  for (const n of [1, 2, 3, 4]) await ok('/sandbox/updatePullRequest', { repo, pr: { number: n }, title: `PR ${n}`, ciSeconds: 3600 });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 5 }, draft: true });
  for (const n of [1, 2, 3, 4, 5]) await ok('/v1/submitPullRequest', { ...queue, pr: { number: n } });

  const board = await waitFor(() => ok('/v1/getQueueBoard', queue), (b) => b.runs.length === 2 && b.runs.every((r: { testBranch?: string }) => r.testBranch));
  // Concurrency 2: #1 alone, #2 on top of #1.
  expect(board.runs.map((r: { pullRequests: number[]; ahead: number[]; status: string }) => [r.pullRequests, r.ahead, r.status])).toEqual([
    [[1], [], 'running'],
    [[2], [1], 'running'],
  ]);
  const prs = board.queue.enqueuedPullRequests as Array<{ prNumber: number; state: string; estimatedMergeAt?: string; notReadyReason?: string }>;
  const etas = [1, 2, 3, 4].map((n) => Date.parse(prs.find((p) => p.prNumber === n)?.estimatedMergeAt ?? 'none'));
  expect(etas.every(Number.isFinite)).toBe(true);
  // Nobody behind is forecast to merge before anyone ahead, and the waiting ones after those under test.
  expect([...etas].sort((a, b) => a - b)).toEqual(etas);
  expect(etas[2]).toBeGreaterThan(etas[1] as number);
  expect(prs.find((p) => p.prNumber === 5)).toMatchObject({ state: 'NOT_READY', notReadyReason: 'draft' });
  expect(prs.find((p) => p.prNumber === 5)).not.toHaveProperty('estimatedMergeAt');
  expect(board.forecast).toEqual({ ciDurationMinutes: 10, failureRate: 0.1, basedOnRuns: 0 });
  // getSubmittedPullRequest forecasts the same time as the board.
  expect((await ok('/v1/getSubmittedPullRequest', { ...queue, pr: { number: 3 } })).estimatedMergeAt).toBe(prs.find((p) => p.prNumber === 3)?.estimatedMergeAt);

  // Paused: no forecast at all.
  await ok('/v1/updateQueue', { ...queue, state: 'PAUSED' });
  const paused = await ok('/v1/getQueueBoard', queue);
  expect(paused.queue.enqueuedPullRequests.some((p: { estimatedMergeAt?: string }) => p.estimatedMergeAt)).toBe(false);
  await ok('/v1/updateQueue', { ...queue, state: 'RUNNING' });
});

test('a probe shows on the board as a run in flight, naming the batch it probes; its PRs\' testing details keep showing the batch', async () => {
  const probed = { repo: { host: 'sandbox', owner: 'demo', name: 'probed' }, targetBranch: 'main' };
  await ok('/v1/createQueue', { ...probed, concurrency: 2 });
  await ok('/v1/updateQueue', { ...probed, state: 'PAUSED' });
  // Six safe PRs and a riskier one, all waiting when the queue starts: they make one batch, nothing else waits, and
  // the idle slot tests ahead of time the part a failure of the batch would be split into first.
  for (const n of [1, 2, 3, 4, 5, 6, 7]) await ok('/sandbox/updatePullRequest', { repo: probed.repo, pr: { number: n }, ciSeconds: 3600 });
  for (const n of [1, 2, 3, 4, 5, 6, 7]) await ok('/v1/submitPullRequest', { ...probed, pr: { number: n }, riskHint: n === 7 ? 0.1 : 0.005 });
  await ok('/v1/updateQueue', { ...probed, state: 'RUNNING' });
  type Run = { engineRunId: string; pullRequests: number[]; probeOf?: string };
  const board = await waitFor(() => ok('/v1/getQueueBoard', probed), (b) => (b.runs as Run[]).some((r) => r.probeOf));
  const runs = board.runs as Run[];
  const probes = runs.filter((r) => r.probeOf);
  expect(probes).toHaveLength(1);
  const [probe] = probes as [Run];
  const batch = runs.find((r) => r.engineRunId === probe.probeOf);
  // A part of a batch in flight, without the riskiest PR (a failure would blame it most).
  expect(batch?.pullRequests.length).toBeGreaterThan(probe.pullRequests.length);
  expect(probe.pullRequests.every((n) => batch?.pullRequests.includes(n))).toBe(true);
  expect(batch?.pullRequests).toContain(7);
  expect(probe.pullRequests).not.toContain(7);
  // Its PRs' latest run is still the batch: the probe decides nothing.
  const details = await ok('/v1/getMergeQueueTestingDetails', { ...probed, pr: { number: probe.pullRequests[0] } });
  expect(details.testedPullRequests.map((pr: { prNumber: number }) => pr.prNumber)).toEqual(batch?.pullRequests);
});

test('ended PRs show their reason, the health counts them, and listQueues sums up the organization\'s queues only', async () => {
  const other = { repo: { host: 'sandbox', owner: 'demo', name: 'ends' }, targetBranch: 'main' };
  await ok('/v1/createQueue', other);
  await ok('/sandbox/updatePullRequest', { repo: other.repo, pr: { number: 1 }, ciSeconds: 5 });
  await ok('/sandbox/updatePullRequest', { repo: other.repo, pr: { number: 2 }, ciSeconds: 5, outcome: 'fail' });
  await ok('/v1/submitPullRequest', { ...other, pr: { number: 1 } });
  await ok('/v1/submitPullRequest', { ...other, pr: { number: 2 } });
  const board = await waitFor(() => ok('/v1/getQueueBoard', other), (b) => b.recentlyEnded.length === 2);
  const ended = board.recentlyEnded.map((e: { pullRequest: { prNumber: number; state: string }; reason: string }) => [e.pullRequest.prNumber, e.pullRequest.state, e.reason]);
  expect(ended.sort()).toEqual([
    [1, 'MERGED', 'merged'],
    [2, 'FAILED', 'failed_tests'],
  ]);
  expect(board.forecast.basedOnRuns).toBeGreaterThanOrEqual(2);

  const health = await ok('/v1/getQueueHealth', { ...other, hours: 1, bucketMinutes: 15 });
  expect(health.buckets).toHaveLength(4);
  expect(health.totals).toMatchObject({ merged: 1, ejected: { failed_tests: 1 } });
  expect(health.totals.ciRuns).toBeGreaterThanOrEqual(2);

  const elsewhere = await h.tokenFor('someone-else', 'sandbox');
  await ok('/v1/createQueue', { repo: { host: 'sandbox', owner: 'someone-else', name: 'hidden' }, targetBranch: 'main' }, elsewhere);
  const { queues } = await ok('/v1/listQueues', {});
  const names = queues.map((q: { repo: { name: string } }) => q.repo.name).sort();
  expect(names).toEqual(['board', 'ends', 'probed']);
  expect(queues.find((q: { repo: { name: string } }) => q.repo.name === 'ends')).toMatchObject({ depth: 0, testing: 0, merged24h: 1, state: 'RUNNING', problems: [] });
  expect(queues.find((q: { repo: { name: string } }) => q.repo.name === 'board')).toMatchObject({ depth: 5, testing: 2, notReady: 1 });
});

test('bad input is a plain-text 400 naming the field; another organization\'s queue is a 403', async () => {
  for (const body of [{ ...queue, hours: 0 }, { ...queue, hours: 'x' }, { ...queue, bucketMinutes: 1 }]) {
    const res = await h.post('/v1/getQueueHealth', body, token);
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/hours|bucketMinutes/);
  }
  const res = await h.post('/v1/getQueueBoard', { repo: { host: 'sandbox', owner: 'someone-else', name: 'hidden' }, targetBranch: 'main' }, token);
  expect(res.statusCode).toBe(403);
});

test('the sandbox demo: a new queue with passing, failing, flaky and conflicting PRs, already moving', async () => {
  const created = await ok('/sandbox/createDemoQueue', {});
  expect(created).toMatchObject({ repo: { host: 'sandbox', owner: 'demo' }, targetBranch: 'main' });
  const board = await ok('/v1/getQueueBoard', created);
  expect(board.queue.enqueuedPullRequests.length + board.recentlyEnded.length).toBe(8);
  expect(board.runs.length).toBeGreaterThan(0);
  const shaped = Object.values((await ok('/sandbox/getRepository', { repo: created.repo })).pullRequests as Record<string, { behavior: { outcome: string; conflictsWith: number[] } }>);
  expect(new Set(shaped.map((pr) => pr.behavior.outcome))).toEqual(new Set(['pass', 'fail', 'flaky']));
  expect(shaped.some((pr) => pr.behavior.conflictsWith.length > 0)).toBe(true);
  // A token of another host cannot make one.
  const github = await h.tokenFor('demo', 'github.com');
  expect((await h.post('/sandbox/createDemoQueue', {}, github)).statusCode).toBe(400);
});
