import { jest } from '@jest/globals';
import type { LightMyRequestResponse } from 'fastify';
import type { PullRequestState } from '../../src/domain/pull-request-state.js';
import { TIMED_OUT_PREFIX, type TestedPullRequest } from '../../src/domain/records.js';
import { repo, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { testRunFixture } from '../support/test-run-fixture.js';
import { forceEntryState } from '../support/force-entry-state.js';

/**
 * getMergeQueueTestingDetails (API-SUPPLEMENT.md): a run named by testRunId or
 * by pr.number (its current or last run). The engine that creates runs comes
 * later, so runs are written straight into the store.
 */

let harness: ApiHarness;
let token: string;

beforeAll(async () => {
  harness = await startApiHarness({ prefix: 'testing_details' });
  token = await harness.tokenFor('acme');
});

afterAll(async () => {
  await harness?.close();
});

type Repo = ReturnType<typeof repo>;
let repoCounter = 0;

async function freshQueue(): Promise<{ r: Repo; queueId: string }> {
  repoCounter += 1;
  const r = repo('acme', `testing-${repoCounter}`);
  const res = await harness.post('/v1/createQueue', { repo: r, targetBranch: 'main' }, token);
  expect(res.statusCode).toBe(200);
  return { r, queueId: res.json().id };
}

const details = (r: Repo, body: Record<string, unknown>, targetBranch = 'main'): Promise<LightMyRequestResponse> =>
  harness.post('/v1/getMergeQueueTestingDetails', { repo: r, targetBranch, ...body }, token);

async function submit(r: Repo, prNumber: number) {
  const res = await harness.post('/v1/submitPullRequest', { repo: r, targetBranch: 'main', pr: { number: prNumber } }, token);
  expect(res.statusCode).toBe(200);
  return res.json() as { id: string };
}

async function forceState(queueId: string, prNumber: number, state: PullRequestState) {
  await harness.app.queueRunner.settled(queueId); // The runner writes the entry when it decides the submit.
  const entry = (await harness.stores.entries.find(queueId, prNumber))!;
  await forceEntryState(harness.stores, entry, state, state === 'MERGED' ? 'merged' : 'ready', new Date());
}

const tested = (prNumber: number, extra: Partial<TestedPullRequest> = {}): TestedPullRequest => ({
  entryId: '0123456789abcdef0123456' + (prNumber % 10),
  prNumber,
  headSha: `${prNumber}`.padStart(40, 'a'),
  ...extra,
});

const run = testRunFixture;

function expectPlainTextError(res: LightMyRequestResponse, status: number, pattern?: RegExp) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  expect(res.body.length).toBeGreaterThan(0);
  if (pattern) expect(res.body).toMatch(pattern);
}

describe('getMergeQueueTestingDetails by testRunId', () => {
  it('answers every field of a failed batched run', async () => {
    const { r, queueId } = await freshQueue();
    const stored = await harness.stores.testRuns.insert(
      run(queueId, {
        status: 'failed',
        testBranch: 'mq/main/batch-7',
        testBranchSha: 'd'.repeat(40),
        testedPullRequests: [
          tested(11, { title: 'First', url: 'https://github.com/acme/x/pull/11' }),
          tested(12, { title: 'Second', url: 'https://github.com/acme/x/pull/12' }),
        ],
        dependentPullRequests: [tested(10, { title: 'Ahead', url: 'https://github.com/acme/x/pull/10' })],
        requiredStatuses: ['build', 'test'],
        requiredStatusesSource: 'queue',
        checkRuns: [
          { name: 'build', url: 'https://ci.example.com/1', status: 'completed', conclusion: 'success' },
          { name: 'test', url: 'https://ci.example.com/2', status: 'completed', conclusion: 'failure' },
        ],
        statusChecks: [{ context: 'legacy/ci', url: 'https://ci.example.com/3', state: 'failure' }],
        failureStatuses: ['test', 'legacy/ci'],
        impactedTargets: ['//a:b', '//c:d'],
        createdAt: new Date('2033-01-02T03:04:05.678Z'),
        finishedAt: new Date('2033-01-02T03:14:05.678Z'),
      }),
    );

    const res = await details(r, { testRunId: stored.id });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(body).toEqual(
      expect.objectContaining({
        testRunId: stored.id,
        status: 'failed',
        testBranch: 'mq/main/batch-7',
        testBranchSha: 'd'.repeat(40),
        createdAt: '2033-01-02T03:04:05.678Z',
        requiredStatuses: ['build', 'test'],
        requiredStatusesSource: 'queue',
        checkSuites: [
          {
            checkRuns: [
              { name: 'build', url: 'https://ci.example.com/1', status: 'completed', conclusion: 'success' },
              { name: 'test', url: 'https://ci.example.com/2', status: 'completed', conclusion: 'failure' },
            ],
          },
        ],
        statusChecks: [{ context: 'legacy/ci', url: 'https://ci.example.com/3', state: 'failure' }],
        testedPullRequests: [
          { prNumber: 11, prUrl: 'https://github.com/acme/x/pull/11', title: 'First' },
          { prNumber: 12, prUrl: 'https://github.com/acme/x/pull/12', title: 'Second' },
        ],
        impactedTargets: ['//a:b', '//c:d'],
        dependentPrs: [{ prNumber: 10, prUrl: 'https://github.com/acme/x/pull/10', title: 'Ahead' }],
        waitingOn: [],
        failureStatuses: ['test', 'legacy/ci'],
      }),
    );
    // Internal bookkeeping stays inside.
    expect(JSON.stringify(body)).not.toMatch(/entryId|headSha|testedPrNumbers|queueId|"_id"/);
  });

  it('answers an in-progress run without checks yet', async () => {
    const { r, queueId } = await freshQueue();
    const stored = await harness.stores.testRuns.insert(run(queueId, { testedPullRequests: [tested(5)], testBranchSha: null, impactedTargets: 'ALL' }));
    const body = (await details(r, { testRunId: stored.id })).json();
    expect(body.status).toBe('in_progress');
    expect(body.checkSuites).toEqual([]);
    expect(body.statusChecks).toEqual([]);
    expect(body.failureStatuses).toEqual([]);
    expect(body.waitingOn).toEqual([]);
    expect(body.dependentPrs).toEqual([]);
    expect(body.impactedTargets).toBe('ALL');
    expect(body.testedPullRequests).toEqual([{ prNumber: 5 }]);
    // No sha yet: absent rather than a made-up value.
    expect(body.testBranchSha ?? null).toBeNull();
  });

  it('accepts the id in upper case', async () => {
    const { r, queueId } = await freshQueue();
    const stored = await harness.stores.testRuns.insert(run(queueId, { testedPullRequests: [tested(6)] }));
    const res = await details(r, { testRunId: stored.id.toUpperCase() });
    expect(res.statusCode).toBe(200);
    expect(res.json().testRunId).toBe(stored.id);
  });

  it.each([
    ['a valid-looking unknown id', 'ffffffffffffffffffffffff'],
    ['a garbage id', 'not-an-id'],
    ['an id one character short', 'fffffffffffffffffffffff'],
    ['an operator-looking id', '{"$gt":""}'],
  ])('answers 404 for %s', async (_label, testRunId) => {
    const { r, queueId } = await freshQueue();
    await harness.stores.testRuns.insert(run(queueId, { testedPullRequests: [tested(7)] }));
    expectPlainTextError(await details(r, { testRunId }), 404);
  });

  it('answers 404 for a run of another queue', async () => {
    const a = await freshQueue();
    const b = await freshQueue();
    const stored = await harness.stores.testRuns.insert(run(a.queueId, { testedPullRequests: [tested(8)] }));
    expect((await details(a.r, { testRunId: stored.id })).statusCode).toBe(200);
    expectPlainTextError(await details(b.r, { testRunId: stored.id }), 404);
  });
});

describe('getMergeQueueTestingDetails by pr.number', () => {
  it("answers the PR's latest run, ignoring runs it is only a dependency of and other queues' runs", async () => {
    const { r, queueId } = await freshQueue();
    const other = await freshQueue();
    await submit(r, 20);
    await forceState(queueId, 20, 'TESTING');
    await harness.stores.testRuns.insert(run(queueId, { testBranch: 'old', status: 'failed', testedPullRequests: [tested(20)], createdAt: new Date('2033-02-01T10:00:00Z') }));
    const latest = await harness.stores.testRuns.insert(
      run(queueId, { testBranch: 'latest', testedPullRequests: [tested(19), tested(20)], createdAt: new Date('2033-02-01T11:00:00Z') }),
    );
    // Newer runs where #20 is only ahead of the PR under test, or in another queue.
    await harness.stores.testRuns.insert(
      run(queueId, { testBranch: 'dependent', testedPullRequests: [tested(21)], dependentPullRequests: [tested(20)], createdAt: new Date('2033-02-01T12:00:00Z') }),
    );
    await harness.stores.testRuns.insert(run(other.queueId, { testBranch: 'elsewhere', testedPullRequests: [tested(20)], createdAt: new Date('2033-02-01T13:00:00Z') }));
    await harness.stores.testRuns.insert(run(queueId, { testBranch: 'someone-else', testedPullRequests: [tested(22)], createdAt: new Date('2033-02-01T14:00:00Z') }));

    const res = await details(r, { pr: { number: 20 } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.testRunId).toBe(latest.id);
    expect(body.testBranch).toBe('latest');
    expect(body.testedPullRequests.map((p: { prNumber: number }) => p.prNumber)).toEqual([19, 20]);
  });

  it('lists in waitingOn the dependent PRs still enqueued when a run succeeded', async () => {
    const { r, queueId } = await freshQueue();
    for (const n of [30, 31, 32, 33]) await submit(r, n);
    await forceState(queueId, 30, 'MERGED'); // ahead, already merged: not waited on
    await forceState(queueId, 31, 'TESTS_PASSED'); // ahead, still to merge
    await forceState(queueId, 32, 'TESTING'); // ahead, still testing
    await forceState(queueId, 33, 'TESTS_PASSED');
    await harness.stores.testRuns.insert(
      run(queueId, {
        status: 'succeeded',
        testedPullRequests: [tested(33)],
        dependentPullRequests: [tested(30, { title: 'merged one' }), tested(31, { title: 'passed one' }), tested(32, { title: 'testing one' })],
        finishedAt: new Date('2033-01-01T10:30:00Z'),
      }),
    );
    // Only the PRs the run builds on are read, not the whole queue: the answer costs the same however long the queue is.
    const scans = jest.spyOn(harness.stores.entries, 'listEnqueued');
    const body = (await details(r, { pr: { number: 33 } })).json();
    expect(scans).not.toHaveBeenCalled();
    scans.mockRestore();
    expect(body.status).toBe('succeeded');
    expect(body.dependentPrs.map((p: { prNumber: number }) => p.prNumber)).toEqual([30, 31, 32]);
    expect(body.waitingOn).toEqual([
      { prNumber: 31, title: 'passed one' },
      { prNumber: 32, title: 'testing one' },
    ]);
    expect(body.failureStatuses).toEqual([]);
  });

  it('waits on nothing once every dependent PR has merged', async () => {
    const { r, queueId } = await freshQueue();
    await submit(r, 34);
    await submit(r, 35);
    await forceState(queueId, 34, 'MERGED');
    await forceState(queueId, 35, 'TESTS_PASSED');
    await harness.stores.testRuns.insert(run(queueId, { status: 'succeeded', testedPullRequests: [tested(35)], dependentPullRequests: [tested(34)] }));
    expect((await details(r, { pr: { number: 35 } })).json().waitingOn).toEqual([]);
  });

  it('waits on nothing while a run is in progress or after it failed', async () => {
    const { r, queueId } = await freshQueue();
    await submit(r, 36);
    await submit(r, 37);
    await submit(r, 38);
    await forceState(queueId, 36, 'TESTING');
    await forceState(queueId, 37, 'TESTING');
    await forceState(queueId, 38, 'PENDING_FAILURE');
    await harness.stores.testRuns.insert(run(queueId, { testedPullRequests: [tested(37)], dependentPullRequests: [tested(36)] }));
    await harness.stores.testRuns.insert(
      run(queueId, { status: 'failed', testedPullRequests: [tested(38)], dependentPullRequests: [tested(36)], failureStatuses: ['lint'] }),
    );
    const inProgress = (await details(r, { pr: { number: 37 } })).json();
    expect(inProgress.dependentPrs).toEqual([{ prNumber: 36 }]);
    expect(inProgress.waitingOn).toEqual([]);
    const failed = (await details(r, { pr: { number: 38 } })).json();
    expect(failed.waitingOn).toEqual([]);
    expect(failed.failureStatuses).toEqual(['lint']);
  });

  it('uses testRunId when both testRunId and pr are given', async () => {
    const { r, queueId } = await freshQueue();
    await submit(r, 39);
    const first = await harness.stores.testRuns.insert(run(queueId, { testBranch: 'first', testedPullRequests: [tested(39)], createdAt: new Date('2033-03-01T00:00:00Z') }));
    await harness.stores.testRuns.insert(run(queueId, { testBranch: 'second', testedPullRequests: [tested(39)], createdAt: new Date('2033-03-02T00:00:00Z') }));
    expect((await details(r, { pr: { number: 39 } })).json().testBranch).toBe('second');
    expect((await details(r, { testRunId: first.id, pr: { number: 39 } })).json().testBranch).toBe('first');
  });

  it('answers 404 for a PR never tested, and for one never submitted', async () => {
    const { r } = await freshQueue();
    await submit(r, 40);
    expectPlainTextError(await details(r, { pr: { number: 40 } }), 404, /#40/);
    expectPlainTextError(await details(r, { pr: { number: 41 } }), 404, /#41/);
  });
});

describe('getMergeQueueTestingDetails: errors', () => {
  it('answers 404 for an unknown queue', async () => {
    const { r } = await freshQueue();
    expectPlainTextError(await details(r, { pr: { number: 1 } }, 'no-such-branch'), 404);
    expectPlainTextError(await details(repo('acme', 'testing-nowhere'), { testRunId: 'ffffffffffffffffffffffff' }), 404);
  });

  // Found by review: the PR was ignored when a run id was given too.
  it('answers 404 when testRunId and pr are both given and the run never held the PR; the run when it did', async () => {
    const { r, queueId } = await freshQueue();
    await submit(r, 3);
    const inserted = await harness.stores.testRuns.insert(run(queueId, { testedPullRequests: [tested(3)], dependentPullRequests: [tested(2)] }));
    expectPlainTextError(await details(r, { testRunId: inserted.id, pr: { number: 4 } }), 404, /did not test pull request #4/);
    for (const number of [3, 2]) expect((await details(r, { testRunId: inserted.id, pr: { number } })).json().testRunId).toBe(inserted.id);
  });

  it('answers 400 when neither testRunId nor pr is given', async () => {
    const { r } = await freshQueue();
    expectPlainTextError(await details(r, {}), 400, /testRunId/);
  });

  it.each([
    ['an empty testRunId', { testRunId: '' }, /testRunId/],
    ['a numeric testRunId', { testRunId: 12 }, /testRunId/],
    ['an operator as testRunId', { testRunId: { $ne: null } }, /testRunId/],
    ['a null testRunId', { testRunId: null }, /testRunId/],
    ['a pr without number', { pr: {} }, /pr\.number/],
    ['pr.number 0', { pr: { number: 0 } }, /pr\.number/],
    ['pr.number as a string that is not digits', { pr: { number: '3a' } }, /pr\.number/],
    ['an operator as pr.number', { pr: { number: { $gt: 0 } } }, /pr\.number/],
  ])('answers 400 for %s', async (_label, body, pattern) => {
    const { r, queueId } = await freshQueue();
    await submit(r, 3);
    await harness.stores.testRuns.insert(run(queueId, { testedPullRequests: [tested(3)] }));
    expectPlainTextError(await details(r, body), 400, pattern);
  });
});

test('getQueue names the problem when the last test run got no result from its required checks in time (CI not running on mq/**), and drops it once a later run finishes', async () => {
  const { r, queueId } = await freshQueue();
  const queueProblems = async () => (await harness.post('/v1/getQueue', { repo: r, targetBranch: 'main' }, token)).json().problems;
  await harness.stores.testRuns.insert(
    testRunFixture(queueId, { status: 'failed', testBranch: 'mq/main/r1', requiredStatuses: ['ci', 'lint'], failureStatuses: [`${TIMED_OUT_PREFIX}ci`, `${TIMED_OUT_PREFIX}lint`], finishedAt: new Date(1_000) }),
  );
  expect(await queueProblems()).toEqual([
    { kind: 'checks_never_reported', since: new Date(1_000).toISOString(), message: expect.stringMatching(/mq\/main\/r1[\s\S]*"ci", "lint"[\s\S]*mq\/\*\*/) },
  ]);
  await harness.stores.testRuns.insert(testRunFixture(queueId, { status: 'succeeded', testBranch: 'mq/main/r2', finishedAt: new Date(2_000) }));
  expect(await queueProblems()).toEqual([]);
});
