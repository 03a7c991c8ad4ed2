import type { LightMyRequestResponse } from 'fastify';
import type { PullRequestState } from '../../src/domain/pull-request-state.js';
import type { PullRequestFacts } from '../../src/domain/records.js';
import type { GitHost } from '../../src/ports/git-host.js';
import { repo, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { forceEntryState } from '../support/force-entry-state.js';

/**
 * submitPullRequest, cancelPullRequest, restartTestsOnPullRequest,
 * getSubmittedPullRequest and setImpactedTargets, against SEED-SPEC.md and
 * API-SUPPLEMENT.md. The queue engine does not run yet: states it would reach
 * are put in place through the stores.
 */

const FAKE_HOST = 'git.example.com';
const START = Date.parse('2031-03-01T10:00:00.000Z');

/** What the fake host answers for one PR: facts, "no such PR", or an outage. */
type HostAnswer = PullRequestFacts | null | 'throw';
const hostPrs = new Map<string, HostAnswer>();
const hostKey = (owner: string, name: string, prNumber: number) => `${owner}/${name}#${prNumber}`;
const readsPullRequests: Pick<GitHost, 'readPullRequest'> = {
  async readPullRequest(r, prNumber) {
    const answer = hostPrs.get(hostKey(r.owner, r.name, prNumber));
    if (answer === 'throw') throw new Error('host unreachable');
    return answer ?? null;
  },
};
/** The rest of the port: building and merging belong to the engine, which these tests do not drive. */
const notUsedHere = {
  readBranchHead: async () => null,
  startTestRun: async () => {
    throw new Error('not used by the API tests');
  },
  cancelTestRun: async () => undefined,
  merge: async () => {
    throw new Error('not used by the API tests');
  },
  reportPullRequestStatus: async () => undefined,
};
/** An in-memory host answers like the sandbox, from this process: requests may read it inline. */
const fakeHost: GitHost = { ...notUsedHere, ...readsPullRequests, answersLocally: true };

function facts(overrides: Partial<PullRequestFacts> = {}): PullRequestFacts {
  return {
    title: 'Add the frobnicator',
    author: 'octocat',
    headSha: 'abcdef0123456789abcdef0123456789abcdef01',
    baseBranch: 'main',
    open: true,
    draft: false,
    merged: false,
    mergeability: 'mergeable',
    readAt: new Date(START),
    ...overrides,
  };
}

let harness: ApiHarness;
let token: string;
let hostToken: string;
/** A clock that moves one second per reading, so every event has its own instant. */
let ticks = 0;
const now = () => new Date(START + 1000 * ticks++);

beforeAll(async () => {
  harness = await startApiHarness({ hosts: { [FAKE_HOST]: fakeHost }, now, prefix: 'pr_endpoints' });
  token = await harness.tokenFor('acme');
  hostToken = await harness.tokenFor('acme', FAKE_HOST);
});

afterAll(async () => {
  await harness?.close();
});

/** Distinct repository names keep the tests independent of each other. */
let repoCounter = 0;
function freshRepo(host = 'github.com') {
  repoCounter += 1;
  return repo('acme', `pr-endpoints-${repoCounter}`, host);
}

const tokenForHost = (host: string) => (host === FAKE_HOST ? hostToken : token);

async function createQueue(r: ReturnType<typeof repo>, targetBranch = 'main', mode?: 'single' | 'parallel') {
  const res = await harness.post('/v1/createQueue', { repo: r, targetBranch, ...(mode ? { mode } : {}) }, tokenForHost(r.host));
  expect(res.statusCode).toBe(200);
  return res.json() as { id: string };
}

/** A fresh repository with a queue on `main`. */
async function freshQueue(options: { host?: string; mode?: 'single' | 'parallel' } = {}) {
  const r = freshRepo(options.host);
  await createQueue(r, 'main', options.mode);
  return r;
}

function call(path: string, body: unknown, r: { host: string }): Promise<LightMyRequestResponse> {
  return harness.post(`/v1/${path}`, body, tokenForHost(r.host));
}

const submit = (r: ReturnType<typeof repo>, prNumber: number, extra: Record<string, unknown> = {}) =>
  call('submitPullRequest', { repo: r, targetBranch: 'main', pr: { number: prNumber }, ...extra }, r);
const cancel = (r: ReturnType<typeof repo>, prNumber: number) =>
  call('cancelPullRequest', { repo: r, targetBranch: 'main', pr: { number: prNumber } }, r);
const restart = (r: ReturnType<typeof repo>, prNumber: number) =>
  call('restartTestsOnPullRequest', { repo: r, targetBranch: 'main', pr: { number: prNumber } }, r);
const read = (r: ReturnType<typeof repo>, prNumber: number, extra: Record<string, unknown> = {}) =>
  call('getSubmittedPullRequest', { repo: r, targetBranch: 'main', pr: { number: prNumber }, ...extra }, r);
const setTargets = (r: ReturnType<typeof repo>, prNumber: number, sha: string, impactedTargets: unknown) =>
  call('setImpactedTargets', { repo: r, targetBranch: 'main', pr: { number: prNumber, sha }, impactedTargets }, r);

function expectPlainTextError(res: LightMyRequestResponse, status: number, pattern?: RegExp) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  expect(res.body.length).toBeGreaterThan(0);
  expect(res.body).not.toMatch(/\n\s+at /); // never a stack trace
  if (pattern) expect(res.body).toMatch(pattern);
}

/** Puts an entry in a state the engine would have reached. */
async function forceState(r: ReturnType<typeof repo>, prNumber: number, state: PullRequestState) {
  const queue = await harness.stores.queues.find(r, 'main');
  // The runner writes the entry when it decides the submit: a submit it could not decide at once (this file's clock
  // jumps a second per reading, so a lease can run out mid-round) is decided now, before its state is forced.
  await harness.app.queueRunner.settled(queue!.id);
  const entry = await harness.stores.entries.find(queue!.id, prNumber);
  expect(entry).not.toBeNull();
  const at = new Date(START + 1000 * ticks++);
  const reason = state === 'MERGED' ? 'merged' : state === 'FAILED' ? 'failed_tests' : 'ready';
  return forceEntryState(harness.stores, entry!, state, reason, at);
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

describe('submitPullRequest', () => {
  it('answers 200 with the full view of a new NOT_READY entry (no host configured)', async () => {
    const r = await freshQueue();
    const res = await submit(r, 12);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const view = res.json();
    expect(view).toEqual(
      expect.objectContaining({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        state: 'NOT_READY',
        readiness: {
          hasImpactedTargets: false,
          requiresImpactedTargets: false,
          doesBaseBranchMatch: expect.any(Boolean),
          gitHubMergeability: 'unspecified',
        },
        stateChangedAt: expect.stringMatching(ISO),
        priorityValue: 100,
        priorityName: 'medium',
        skipTheLine: false,
        isCurrentlySubmittedToQueue: true,
        noBatch: false,
        prNumber: 12,
      }),
    );
    // Without a host nothing is known about the PR itself.
    expect(view.prTitle).toBeUndefined();
    expect(view.prSha).toBeUndefined();
    expect(view.impactedTargets).toBeUndefined();
    expect(view.timeline).toBeUndefined();
    expect(Number.isNaN(Date.parse(view.stateChangedAt))).toBe(false);
  });

  it('requires impacted targets only in parallel mode', async () => {
    const single = await freshQueue({ mode: 'single' });
    const parallel = await freshQueue({ mode: 'parallel' });
    expect((await submit(single, 1)).json().readiness.requiresImpactedTargets).toBe(false);
    expect((await submit(parallel, 1)).json().readiness.requiresImpactedTargets).toBe(true);
  });

  it.each([
    ['URGENT', 0, 'urgent', true],
    ['urgent', 0, 'urgent', true],
    ['High', 10, 'high', false],
    ['low', 200, 'low', false],
    [0, 0, 'urgent', true],
    [42, 42, undefined, false],
    [255, 255, undefined, false],
  ])('accepts priority %p as priorityValue %p', async (priority, value, name, skip) => {
    const r = await freshQueue();
    const res = await submit(r, 5, { priority });
    expect(res.statusCode).toBe(200);
    const view = res.json();
    expect(view.priorityValue).toBe(value);
    expect(view.priorityName).toBe(name);
    expect(view.skipTheLine).toBe(skip);
  });

  it.each([256, -1, 1.5, 'asap', '', null, true, { value: 0 }, [0]])('rejects priority %p with a 400', async (priority) => {
    const r = await freshQueue();
    expectPlainTextError(await submit(r, 5, { priority }), 400, /priority/);
    // Nothing was recorded.
    expectPlainTextError(await read(r, 5), 404);
  });

  it('records noBatch', async () => {
    const r = await freshQueue();
    expect((await submit(r, 8, { noBatch: true })).json().noBatch).toBe(true);
    expectPlainTextError(await submit(r, 9, { noBatch: 'yes' }), 400, /noBatch/);
  });

  it('ignores unknown extra fields', async () => {
    const r = await freshQueue();
    const res = await submit(r, 3, { 'x-source': 'ci', somethingElse: { nested: true } });
    expect(res.statusCode).toBe(200);
    expect(res.json().state).toBe('NOT_READY');
  });

  it('shows what the host says about the PR', async () => {
    const r = await freshQueue({ host: FAKE_HOST });
    hostPrs.set(hostKey(r.owner, r.name, 21), facts({ title: 'Fix the thing', author: 'mona', headSha: '1234abcd', mergeability: 'not_mergeable' }));
    const res = await submit(r, 21);
    expect(res.statusCode).toBe(200);
    const view = res.json();
    expect(view).toEqual(
      expect.objectContaining({
        state: 'NOT_READY',
        prTitle: 'Fix the thing',
        prAuthor: 'mona',
        prSha: '1234abcd',
        prBaseBranch: 'main',
        readiness: expect.objectContaining({ doesBaseBranchMatch: true, gitHubMergeability: 'not_mergeable' }),
      }),
    );
  });

  it('tells when the PR base is not the queue branch', async () => {
    const r = await freshQueue({ host: FAKE_HOST });
    hostPrs.set(hostKey(r.owner, r.name, 22), facts({ baseBranch: 'develop', mergeability: 'in_progress' }));
    const view = (await submit(r, 22)).json();
    expect(view.prBaseBranch).toBe('develop');
    expect(view.readiness).toEqual(expect.objectContaining({ doesBaseBranchMatch: false, gitHubMergeability: 'in_progress' }));
  });

  it('refuses a PR the host says is merged with 400 "already merged"', async () => {
    const r = await freshQueue({ host: FAKE_HOST });
    hostPrs.set(hostKey(r.owner, r.name, 23), facts({ merged: true, open: false }));
    expectPlainTextError(await submit(r, 23), 400, /already merged/);
    expectPlainTextError(await read(r, 23), 404);
  });

  it('answers 404 when the host has no such PR', async () => {
    const r = await freshQueue({ host: FAKE_HOST });
    expectPlainTextError(await submit(r, 24), 404, /#24/);
    expectPlainTextError(await read(r, 24), 404);
  });

  it('still records the submission when the host cannot be reached', async () => {
    const r = await freshQueue({ host: FAKE_HOST });
    hostPrs.set(hostKey(r.owner, r.name, 25), 'throw');
    const res = await submit(r, 25);
    expect(res.statusCode).toBe(200);
    const view = res.json();
    expect(view.state).toBe('NOT_READY');
    expect(view.readiness.gitHubMergeability).toBe('unspecified');
    expect(view.prTitle).toBeUndefined();
    expect((await read(r, 25)).statusCode).toBe(200);
  });

  it('re-submitting a queued PR updates priority and noBatch without a new attempt', async () => {
    const r = await freshQueue();
    const first = (await submit(r, 30)).json();
    const again = await submit(r, 30, { priority: 'urgent', noBatch: true });
    expect(again.statusCode).toBe(200);
    const view = again.json();
    expect(view.id).toBe(first.id);
    expect(view.state).toBe('NOT_READY');
    expect(view.priorityValue).toBe(0);
    expect(view.skipTheLine).toBe(true);
    expect(view.noBatch).toBe(true);
    expect(view.stateChangedAt).toBe(first.stateChangedAt);

    // Omitted fields stay as they were.
    const third = (await submit(r, 30)).json();
    expect(third.priorityValue).toBe(0);
    expect(third.noBatch).toBe(true);

    const timeline = (await read(r, 30, { includeTimeline: true })).json().timeline;
    expect(timeline).toHaveLength(1);
    expect(timeline[0]).toEqual(expect.objectContaining({ state: 'NOT_READY', reason: 'submitted' }));
    const queue = await harness.stores.queues.find(r, 'main');
    expect((await harness.stores.entries.find(queue!.id, 30))!.attempt).toBe(1);
  });

  it('re-submitting after a cancel starts a new attempt of the same entry', async () => {
    const r = await freshQueue();
    const first = (await submit(r, 31, { priority: 'low' })).json();
    expect((await cancel(r, 31)).statusCode).toBe(200);
    const res = await submit(r, 31);
    expect(res.statusCode).toBe(200);
    const view = res.json();
    expect(view.id).toBe(first.id);
    expect(view.state).toBe('NOT_READY');
    expect(view.isCurrentlySubmittedToQueue).toBe(true);
    expect(Date.parse(view.stateChangedAt)).toBeGreaterThan(Date.parse(first.stateChangedAt));

    const timeline = (await read(r, 31, { includeTimeline: true })).json().timeline;
    expect(timeline.map((e: { reason: string }) => e.reason)).toEqual(['resubmitted', 'user_requested', 'submitted']);
    expect(timeline.map((e: { state: string }) => e.state)).toEqual(['NOT_READY', 'CANCELLED', 'NOT_READY']);
    const queue = await harness.stores.queues.find(r, 'main');
    const entry = await harness.stores.entries.find(queue!.id, 31);
    expect(entry!.attempt).toBe(2);
    expect(entry!.concludedAt).toBeNull();
  });

  it('re-submitting a FAILED PR starts a new attempt too', async () => {
    const r = await freshQueue();
    await submit(r, 32);
    await forceState(r, 32, 'FAILED');
    const view = (await submit(r, 32)).json();
    expect(view.state).toBe('NOT_READY');
    expect(view.isCurrentlySubmittedToQueue).toBe(true);
  });

  it('refuses to re-submit a PR the queue already merged', async () => {
    const r = await freshQueue();
    await submit(r, 33);
    await forceState(r, 33, 'MERGED');
    expectPlainTextError(await submit(r, 33), 400, /already merged/);
    expect((await read(r, 33)).json().state).toBe('MERGED');
  });

  it('answers 404 for an unknown queue', async () => {
    const r = freshRepo();
    expectPlainTextError(await submit(r, 1), 404, /queue/i);
    const other = await freshQueue();
    expectPlainTextError(await call('submitPullRequest', { repo: other, targetBranch: 'release', pr: { number: 1 } }, other), 404);
  });

  it.each([
    ['0', { number: 0 }],
    ['-1', { number: -1 }],
    ['1.5', { number: 1.5 }],
    ['"7a" (a string, not digits)', { number: '7a' }],
    ['missing number', {}],
    ['too large', { number: 2 ** 31 }],
    ['null', { number: null }],
  ])('rejects pr.number %s with a 400 that names the field', async (_label, pr) => {
    const r = await freshQueue();
    expectPlainTextError(await call('submitPullRequest', { repo: r, targetBranch: 'main', pr }, r), 400, /pr\.number/);
  });

  it.each([
    [-1e20, /at least 1\b/],
    [1e20, /at most 2147483647\b/],
    [2 ** 53 + 2, /at most 2147483647\b/],
  ])('names the real bound when pr.number is %p', async (number, bound) => {
    const r = await freshQueue();
    expectPlainTextError(await call('submitPullRequest', { repo: r, targetBranch: 'main', pr: { number } }, r), 400, bound);
  });

  it('rejects a missing pr with a 400', async () => {
    const r = await freshQueue();
    expectPlainTextError(await call('submitPullRequest', { repo: r, targetBranch: 'main' }, r), 400, /'pr'/);
  });
});

describe('cancelPullRequest', () => {
  it('cancels a queued PR, and cancelling twice is fine', async () => {
    const r = await freshQueue();
    const submitted = (await submit(r, 40)).json();
    const res = await cancel(r, 40);
    expect(res.statusCode).toBe(200);
    const view = res.json();
    expect(view.id).toBe(submitted.id);
    expect(view.state).toBe('CANCELLED');
    expect(view.isCurrentlySubmittedToQueue).toBe(false);
    expect(Date.parse(view.stateChangedAt)).toBeGreaterThan(Date.parse(submitted.stateChangedAt));

    const twice = await cancel(r, 40);
    expect(twice.statusCode).toBe(200);
    expect(twice.json().state).toBe('CANCELLED');
    expect(twice.json().stateChangedAt).toBe(view.stateChangedAt);
    const timeline = (await read(r, 40, { includeTimeline: true })).json().timeline;
    expect(timeline.filter((e: { state: string }) => e.state === 'CANCELLED')).toHaveLength(1);
  });

  it('cancels a PR that is testing', async () => {
    const r = await freshQueue();
    await submit(r, 41);
    await forceState(r, 41, 'TESTING');
    const res = await cancel(r, 41);
    expect(res.statusCode).toBe(200);
    expect(res.json().state).toBe('CANCELLED');
  });

  it('removes the cancelled PR from the queue listing', async () => {
    const r = await freshQueue();
    await submit(r, 42);
    await submit(r, 43);
    await cancel(r, 42);
    const queue = (await call('getQueue', { repo: r, targetBranch: 'main' }, r)).json();
    expect(queue.enqueuedPullRequests.map((p: { prNumber: number }) => p.prNumber)).toEqual([43]);
  });

  it('answers 404 for a PR never submitted, and for an unknown queue', async () => {
    const r = await freshQueue();
    expectPlainTextError(await cancel(r, 44), 404, /#44/);
    expectPlainTextError(await cancel(freshRepo(), 44), 404);
  });

  it.each(['PENDING', 'TESTS_PASSED', 'PENDING_FAILURE'] as const)('cancels a %s PR', async (state) => {
    const r = await freshQueue();
    await submit(r, 46);
    await forceState(r, 46, state);
    const res = await cancel(r, 46);
    expect(res.statusCode).toBe(200);
    expect(res.json().state).toBe('CANCELLED');
    expect(res.json().isCurrentlySubmittedToQueue).toBe(false);
  });

  it('answers 400 for a failed PR, which is no longer in the queue', async () => {
    const r = await freshQueue();
    await submit(r, 47);
    await forceState(r, 47, 'FAILED');
    expectPlainTextError(await cancel(r, 47), 400, /FAILED/);
  });

  it('answers 400 for a merged PR', async () => {
    const r = await freshQueue();
    await submit(r, 45);
    await forceState(r, 45, 'MERGED');
    expectPlainTextError(await cancel(r, 45), 400, /MERGED/);
    expect((await read(r, 45)).json().state).toBe('MERGED');
  });

  it('rejects a bad pr.number with a 400', async () => {
    const r = await freshQueue();
    expectPlainTextError(await call('cancelPullRequest', { repo: r, targetBranch: 'main', pr: { number: 0 } }, r), 400, /pr\.number/);
  });
});

describe('restartTestsOnPullRequest', () => {
  it('refuses a NOT_READY PR with a 400 naming its state', async () => {
    const r = await freshQueue();
    await submit(r, 50);
    expectPlainTextError(await restart(r, 50), 400, /NOT_READY/);
    expect((await read(r, 50)).json().state).toBe('NOT_READY');
  });

  it.each(['PENDING', 'TESTS_PASSED', 'MERGED', 'FAILED'] as const)('refuses a %s PR with a 400', async (state) => {
    const r = await freshQueue();
    await submit(r, 51);
    await forceState(r, 51, state);
    expectPlainTextError(await restart(r, 51), 400, new RegExp(state));
  });

  it('refuses a CANCELLED PR with a 400', async () => {
    const r = await freshQueue();
    await submit(r, 52);
    await cancel(r, 52);
    expectPlainTextError(await restart(r, 52), 400, /CANCELLED/);
  });

  // The engine re-runs the tests (test/e2e/sandbox-queue.test.ts); this entry was put in
  // its state behind the engine's back, so here the API records the request and keeps the place.
  it.each(['TESTING', 'PENDING_FAILURE'] as const)('accepts a restart of a %s PR and keeps its place', async (state) => {
    const r = await freshQueue();
    const submitted = (await submit(r, 53, { priority: 'high' })).json();
    await forceState(r, 53, state);
    const queue = await harness.stores.queues.find(r, 'main');
    const before = await harness.stores.entries.find(queue!.id, 53);

    const res = await restart(r, 53);
    expect(res.statusCode).toBe(200);
    const view = res.json();
    expect(view.id).toBe(submitted.id);
    expect(view.state).toBe(state);
    expect(view.isCurrentlySubmittedToQueue).toBe(true);
    expect(view.priorityValue).toBe(10);
    expect(view.priorityName).toBe('high');
    expect(view.submittedAt).toBe(submitted.submittedAt);

    const after = await harness.stores.entries.find(queue!.id, 53);
    expect(after!.submittedAt.getTime()).toBe(before!.submittedAt.getTime());
    expect(after!.priority).toBe(10);
    expect(after!.attempt).toBe(1);
    const timeline = (await read(r, 53, { includeTimeline: true })).json().timeline;
    expect(timeline[0]).toEqual(expect.objectContaining({ state, reason: 'restart_requested' }));
  });

  it('answers 404 for a PR never submitted, and for an unknown queue', async () => {
    const r = await freshQueue();
    expectPlainTextError(await restart(r, 54), 404);
    expectPlainTextError(await restart(freshRepo(), 54), 404);
  });
});

describe('getSubmittedPullRequest', () => {
  it('answers the same view as submit', async () => {
    const r = await freshQueue();
    const submitted = (await submit(r, 60, { priority: 7, noBatch: true })).json();
    const res = await read(r, 60);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(submitted);
  });

  it('adds the timeline on request: newest first, with machine-readable reasons', async () => {
    const r = await freshQueue();
    await submit(r, 61);
    await cancel(r, 61);
    await submit(r, 61);
    await forceState(r, 61, 'TESTING');
    const res = await read(r, 61, { includeTimeline: true });
    expect(res.statusCode).toBe(200);
    const { timeline, state, stateChangedAt } = res.json();
    expect(state).toBe('TESTING');
    expect(timeline).toHaveLength(4);
    for (const event of timeline) {
      expect(event).toEqual(expect.objectContaining({ timestamp: expect.stringMatching(ISO), state: expect.any(String), reason: expect.stringMatching(/^[a-z_]+$/) }));
    }
    expect(timeline.map((e: { state: string }) => e.state)).toEqual(['TESTING', 'NOT_READY', 'CANCELLED', 'NOT_READY']);
    expect(timeline.slice(1).map((e: { reason: string }) => e.reason)).toEqual(['resubmitted', 'user_requested', 'submitted']);
    const times = timeline.map((e: { timestamp: string }) => Date.parse(e.timestamp));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(new Set(times).size).toBe(times.length);
    // The newest event is the current state.
    expect(timeline[0].timestamp).toBe(stateChangedAt);
  });

  it('leaves the timeline out unless asked', async () => {
    const r = await freshQueue();
    await submit(r, 62);
    expect((await read(r, 62)).json().timeline).toBeUndefined();
    expect((await read(r, 62, { includeTimeline: false })).json().timeline).toBeUndefined();
    expectPlainTextError(await read(r, 62, { includeTimeline: 'yes' }), 400, /includeTimeline/);
  });

  it('answers 404 for a PR never submitted, and for an unknown queue', async () => {
    const r = await freshQueue();
    await submit(r, 63);
    expectPlainTextError(await read(r, 64), 404, /#64/);
    expectPlainTextError(await read(freshRepo(), 63), 404);
    expectPlainTextError(await call('getSubmittedPullRequest', { repo: r, targetBranch: 'other', pr: { number: 63 } }, r), 404);
  });

  it('finds the PR whatever the letter case of host, owner and name, but not of the branch', async () => {
    const r = await freshQueue();
    const submitted = (await submit(r, 66)).json();
    const shouted = { host: r.host.toUpperCase(), owner: r.owner.toUpperCase(), name: r.name.toUpperCase() };
    const res = await call('getSubmittedPullRequest', { repo: shouted, targetBranch: 'main', pr: { number: 66 } }, r);
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(submitted.id);
    expectPlainTextError(await call('getSubmittedPullRequest', { repo: r, targetBranch: 'Main', pr: { number: 66 } }, r), 404);
  });

  it('keeps PRs of different queues apart', async () => {
    const r = freshRepo();
    await createQueue(r, 'main');
    await createQueue(r, 'release');
    await submit(r, 65, { priority: 'low' });
    expectPlainTextError(await call('getSubmittedPullRequest', { repo: r, targetBranch: 'release', pr: { number: 65 } }, r), 404);
  });
});

describe('setImpactedTargets', () => {
  const SHA = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';

  it('accepts targets before the PR is submitted, and the PR shows them once submitted', async () => {
    const r = await freshQueue({ mode: 'parallel' });
    const res = await setTargets(r, 70, SHA, ['//app:lib', '//app:test']);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual(expect.objectContaining({ isCurrentlySubmittedToQueue: false }));

    const view = (await submit(r, 70)).json();
    expect(view.readiness).toEqual(expect.objectContaining({ hasImpactedTargets: true, requiresImpactedTargets: true }));
    expect(view.impactedTargets).toEqual(['//app:lib', '//app:test']);
  });

  it('shows targets uploaded after the submission', async () => {
    const r = await freshQueue({ mode: 'parallel' });
    expect((await submit(r, 71)).json().readiness.hasImpactedTargets).toBe(false);
    const res = await setTargets(r, 71, SHA, ['x']);
    expect(res.statusCode).toBe(200);
    expect(res.json().isCurrentlySubmittedToQueue).toBe(true);
    const view = (await read(r, 71)).json();
    expect(view.readiness.hasImpactedTargets).toBe(true);
    expect(view.impactedTargets).toEqual(['x']);
  });

  it.each(['ALL', 'all', 'All'])('accepts %p as every target', async (all) => {
    const r = await freshQueue({ mode: 'parallel' });
    await submit(r, 72);
    const res = await setTargets(r, 72, SHA, all);
    expect(res.statusCode).toBe(200);
    const view = (await read(r, 72)).json();
    expect(view.impactedTargets).toBe('ALL');
    expect(view.readiness.hasImpactedTargets).toBe(true);
  });

  it('replaces an earlier upload for the same sha', async () => {
    const r = await freshQueue({ mode: 'parallel' });
    await submit(r, 73);
    await setTargets(r, 73, SHA, ['old-1', 'old-2']);
    await setTargets(r, 73, SHA, ['new-1']);
    expect((await read(r, 73)).json().impactedTargets).toEqual(['new-1']);
    await setTargets(r, 73, SHA, 'ALL');
    expect((await read(r, 73)).json().impactedTargets).toBe('ALL');
    await setTargets(r, 73, SHA, ['back']);
    expect((await read(r, 73)).json().impactedTargets).toEqual(['back']);
  });

  it('treats the sha case-insensitively', async () => {
    const r = await freshQueue({ host: FAKE_HOST, mode: 'parallel' });
    hostPrs.set(hostKey(r.owner, r.name, 74), facts({ headSha: 'abcdef12abcdef12abcdef12abcdef12abcdef12' }));
    await submit(r, 74);
    expect((await setTargets(r, 74, 'ABCDEF12ABCDEF12ABCDEF12ABCDEF12ABCDEF12', ['t'])).statusCode).toBe(200);
    expect((await read(r, 74)).json().impactedTargets).toEqual(['t']);
  });

  it('with a host, counts only the targets computed for the current head', async () => {
    const r = await freshQueue({ host: FAKE_HOST, mode: 'parallel' });
    const head = 'cafe0000cafe0000cafe0000cafe0000cafe0000';
    const stale = 'dead0000dead0000dead0000dead0000dead0000';
    hostPrs.set(hostKey(r.owner, r.name, 75), facts({ headSha: head }));
    await setTargets(r, 75, stale, ['stale-target']);
    const submitted = (await submit(r, 75)).json();
    expect(submitted.prSha).toBe(head);
    expect(submitted.readiness.hasImpactedTargets).toBe(false);
    expect(submitted.impactedTargets).toBeUndefined();

    await setTargets(r, 75, head, ['fresh-target']);
    // An upload for an older head arriving later does not replace the current one.
    await setTargets(r, 75, stale, ['late-stale-target']);
    const view = (await read(r, 75)).json();
    expect(view.readiness.hasImpactedTargets).toBe(true);
    expect(view.impactedTargets).toEqual(['fresh-target']);
  });

  it('keeps targets of different PRs and queues apart', async () => {
    const r = await freshQueue({ mode: 'parallel' });
    const other = await freshQueue({ mode: 'parallel' });
    await setTargets(r, 76, SHA, ['mine']);
    await setTargets(other, 77, SHA, ['theirs']);
    await submit(r, 77);
    expect((await read(r, 77)).json().readiness.hasImpactedTargets).toBe(false);
  });

  it('answers 404 for an unknown queue', async () => {
    expectPlainTextError(await setTargets(freshRepo(), 78, SHA, ['x']), 404);
  });

  it.each([
    ['a sha that is not hex', { number: 79, sha: 'not-a-sha' }, ['x'], /pr\.sha/],
    ['a missing sha', { number: 79 }, ['x'], /pr\.sha/],
    ['a too short sha', { number: 79, sha: 'abc' }, ['x'], /pr\.sha/],
    // Matched exactly against the head the host reports, an abbreviation would leave the PR waiting for ever.
    ['an abbreviated sha', { number: 79, sha: SHA.slice(0, 12) }, ['x'], /pr\.sha.*full commit sha/],
    ['a sha one character short', { number: 79, sha: SHA.slice(0, 39) }, ['x'], /pr\.sha/],
    ['a numeric sha', { number: 79, sha: 1234567 }, ['x'], /pr\.sha/],
    ['a bad pr.number', { number: 0, sha: SHA }, ['x'], /pr\.number/],
  ])('rejects %s with a 400', async (_label, pr, targets, pattern) => {
    const r = await freshQueue();
    expectPlainTextError(await call('setImpactedTargets', { repo: r, targetBranch: 'main', pr, impactedTargets: targets }, r), 400, pattern);
  });

  it.each([
    ['numbers in the list', [1, 2]],
    ['a null target', ['a', null]],
    ['an empty target name', ['']],
    ['another string than ALL', 'SOME'],
    ['an object', { targets: ['a'] }],
    ['missing', undefined],
  ])('rejects impactedTargets with %s with a 400', async (_label, impactedTargets) => {
    const r = await freshQueue();
    expectPlainTextError(await setTargets(r, 79, SHA, impactedTargets), 400, /impactedTargets/);
  });
});

describe('concurrent requests on one PR', () => {
  it('concurrent first submissions create one entry with one submitted event', async () => {
    const r = await freshQueue();
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => submit(r, 90)));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.json().id)).size).toBe(1);
    const timeline = (await read(r, 90, { includeTimeline: true })).json().timeline;
    expect(timeline.map((e: { reason: string }) => e.reason)).toEqual(['submitted']);
  });

  it('concurrent re-submissions after a cancel start exactly one new attempt', async () => {
    const r = await freshQueue();
    await submit(r, 91);
    await cancel(r, 91);
    const answers = await Promise.all([1, 2, 3, 4].map(() => submit(r, 91)));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200]);
    const timeline = (await read(r, 91, { includeTimeline: true })).json().timeline;
    expect(timeline.map((e: { reason: string }) => e.reason)).toEqual(['resubmitted', 'user_requested', 'submitted']);
    const queue = await harness.stores.queues.find(r, 'main');
    expect((await harness.stores.entries.find(queue!.id, 91))!.attempt).toBe(2);
  });

  it('concurrent cancels record one cancellation', async () => {
    const r = await freshQueue();
    await submit(r, 92);
    const answers = await Promise.all([1, 2, 3, 4].map(() => cancel(r, 92)));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200]);
    const timeline = (await read(r, 92, { includeTimeline: true })).json().timeline;
    expect(timeline.map((e: { reason: string }) => e.reason)).toEqual(['user_requested', 'submitted']);
  });

  it('a priority change racing a cancel is not lost', async () => {
    const r = await freshQueue();
    await submit(r, 93);
    const [cancelled, resubmitted] = await Promise.all([cancel(r, 93), submit(r, 93, { priority: 'urgent' })]);
    expect(cancelled.statusCode).toBe(200);
    expect(resubmitted.statusCode).toBe(200);
    // Whichever ran first, the stored PR is what one of the two serial orders gives.
    const view = (await read(r, 93)).json();
    expect(view.priorityValue).toBe(0);
    if (view.state === 'CANCELLED') {
      // submit, then cancel: the cancel saw the new priority.
      expect(cancelled.json().priorityValue).toBe(0);
    } else {
      // cancel, then submit: a new attempt.
      expect(view.state).toBe('NOT_READY');
      expect(resubmitted.json().state).toBe('NOT_READY');
      expect((await read(r, 93, { includeTimeline: true })).json().timeline[0].reason).toBe('resubmitted');
    }
  });
});

describe('setImpactedTargets: large and repeated lists', () => {
  it('keeps a list of several megabytes whole and in order', async () => {
    const r = await freshQueue({ mode: 'parallel' });
    const targets = Array.from({ length: 150_000 }, (_, i) => `//services/some/rather/long/package/path/${i}:target_name`);
    const res = await setTargets(r, 95, 'abcdef1234abcdef1234abcdef1234abcdef1234', targets);
    expect(res.statusCode).toBe(200);
    const view = (await submit(r, 95)).json();
    expect(view.impactedTargets).toHaveLength(targets.length);
    expect(view.impactedTargets).toEqual(targets);
  }, 60_000);

  it('keeps each target once, in the order first given', async () => {
    const r = await freshQueue({ mode: 'parallel' });
    await submit(r, 96);
    expect((await setTargets(r, 96, 'abcdef1234abcdef1234abcdef1234abcdef1234', ['b', 'a', 'b', 'c', 'a'])).statusCode).toBe(200);
    expect((await read(r, 96)).json().impactedTargets).toEqual(['b', 'a', 'c']);
  });

  it('accepts an empty list as "impacts nothing"', async () => {
    const r = await freshQueue({ mode: 'parallel' });
    await submit(r, 97);
    expect((await setTargets(r, 97, 'abcdef1234abcdef1234abcdef1234abcdef1234', [])).statusCode).toBe(200);
    const view = (await read(r, 97)).json();
    expect(view.readiness.hasImpactedTargets).toBe(true);
    expect(view.impactedTargets).toEqual([]);
  });
});
