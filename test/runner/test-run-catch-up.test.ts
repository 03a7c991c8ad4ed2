/**
 * During a rolling deploy from a version without sha pointers, recent copies and PR pointers, its replicas may still
 * start and update runs after the start-up backfills set their marks. While the marks are young, every prune (and a
 * start-up) gives such runs what they miss; once the marks are old, nothing scans test_runs any more.
 */
import { jest } from '@jest/globals';
import { ObjectId } from 'mongodb';
import type { Connection } from 'mongoose';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { CATCH_UP_WINDOW_MS, catchUpRuns } from '../../src/adapters/mongo/test-run-catch-up.js';
import type { TestedPullRequest } from '../../src/domain/records.js';
import { testRunFixture } from '../support/test-run-fixture.js';
import { storesModel, useRunnerDatabaseWithDriver } from './support/runner-fixture.js';

const db = useRunnerDatabaseWithDriver('test_run_catch_up');

const HOUR = 60 * 60 * 1000;
const ago = (ms: number) => new Date(Date.now() - ms);
const pr = (prNumber: number): TestedPullRequest => ({ entryId: `e${prNumber}`, prNumber, headSha: `head${prNumber}`, title: `PR ${prNumber}`, url: '' });
let shas = 0;
/** A fresh hex sha per call. */
const sha = () => (++shas).toString(16).padStart(40, 'd');
const marks = () => [db.raw.collection('test_run_shas'), db.raw.collection('test_run_prs')];
const connection = () => storesModel(db.raw.databaseName, 'test_runs').db as Connection;

/** A run as the previous version stores it: in test_runs alone, no pointer, no copy. */
async function oldRun(queueId: ObjectId, overrides: Parameters<typeof testRunFixture>[1] = {}) {
  const prs = overrides.testedPullRequests ?? [];
  const doc = { _id: new ObjectId(), ...testRunFixture(queueId.toHexString(), { createdAt: ago(HOUR / 6), ...overrides }), queueId, testedPrNumbers: prs.map((p) => p.prNumber) };
  await db.raw.collection('test_runs').insertOne(doc);
  return { ...doc, id: doc._id.toHexString() };
}

/** The marks as a database upgraded from the previous version (runs stored before) has them: set now. */
async function upgradedNow() {
  for (const collection of marks()) await collection.updateOne({ _id: 'complete' } as never, { $set: { at: new Date() } });
}

test('a new install (no runs) gets marks with no catch-up window; a database with runs before gets them set now', async () => {
  for (const collection of marks()) expect((await collection.findOne({ _id: 'complete' } as never))?.at).toEqual(new Date(0));
  // The backfills again, on a database holding a run of the previous version.
  for (const collection of marks()) await collection.deleteOne({ _id: 'complete' } as never);
  await oldRun(new ObjectId(), { testBranchSha: sha() });
  const opened = await openMongoStores({ uri: db.uri });
  await opened.close();
  for (const collection of marks()) {
    const mark = await collection.findOne({ _id: 'complete' } as never);
    expect(mark?.at).toBeInstanceOf(Date);
    expect(Date.now() - (mark?.at as Date).getTime()).toBeLessThan(HOUR);
  }
});

test('while the marks are young, prune gives runs the previous version wrote their pointers and copies', async () => {
  await upgradedNow();
  const runs = db.stores.testRuns;
  const queue = new ObjectId();
  const queueId = queue.toHexString();
  // Started by the previous version, built, in progress.
  const running = sha();
  const started = await oldRun(queue, { testBranchSha: running, testedPullRequests: [pr(5), pr(6)] });
  // Started by this version, then given its sha by the previous one (test_runs alone).
  const later = sha();
  const given = await runs.insert(testRunFixture(queueId, { engineRunId: 'given', testBranchSha: null, testedPullRequests: [pr(7)], createdAt: ago(HOUR / 3) }));
  await db.raw.collection('test_runs').updateOne({ _id: new ObjectId(given.id) }, { $set: { testBranch: 'mq/main/given', testBranchSha: later } });
  // Started and finished by the previous version between two prunes.
  const landed = sha();
  const finished = await oldRun(queue, { testBranchSha: landed, testedPullRequests: [pr(8)], status: 'succeeded', createdAt: ago(HOUR / 2), finishedAt: ago(HOUR / 4) });

  expect(await runs.findInProgressByTestBranchSha(running)).toBeNull();
  expect(await runs.findInProgressByTestBranchSha(later)).toBeNull();
  expect((await runs.listInProgress()).map((run) => run.id)).not.toContain(started.id);
  expect((await runs.listInProgress()).find((run) => run.id === given.id)?.testBranchSha).toBeNull();
  expect(await runs.countInProgress(queueId)).toBe(1);
  expect(await runs.latestForPr(queueId, 5)).toBeNull();
  expect(await runs.latestForPr(queueId, 8)).toBeNull();
  expect(await runs.latestFinished(queueId)).toBeNull();
  expect(await runs.testedCommit(queueId, landed)).toBe(false);

  await runs.prune(new Date());

  expect((await runs.findInProgressByTestBranchSha(running))?.id).toBe(started.id);
  expect((await runs.findInProgressByTestBranchSha(later))?.id).toBe(given.id);
  const inProgress = await runs.listInProgress();
  expect(inProgress.map((run) => run.id)).toEqual(expect.arrayContaining([started.id, given.id]));
  // The reconcile skips a run without a sha: the copy has the one the previous version gave.
  expect(inProgress.find((run) => run.id === given.id)?.testBranchSha).toBe(later);
  expect(await runs.countInProgress(queueId)).toBe(2);
  for (const prNumber of [5, 6]) expect((await runs.latestForPr(queueId, prNumber))?.id).toBe(started.id);
  expect((await runs.latestForPr(queueId, 7))?.id).toBe(given.id);
  expect((await runs.latestForPr(queueId, 8))?.id).toBe(finished.id);
  expect((await runs.latestFinished(queueId))?.id).toBe(finished.id);
  expect(await runs.testedCommit(queueId, landed)).toBe(true);
  // The copies are the runs as stored.
  for (const id of [started._id, new ObjectId(given.id), finished._id]) {
    expect(await db.raw.collection('test_runs_recent').findOne({ _id: id })).toEqual(await db.raw.collection('test_runs').findOne({ _id: id }));
  }
  // Nothing left to write: the next catch-up reads, and writes nothing.
  expect(await catchUpRuns(connection(), new Date())).toBe(0);

  // This version's store finishes the run the previous one started: the copy follows.
  await runs.update(started.id, { status: 'succeeded', finishedAt: new Date() });
  expect(await runs.findInProgressByTestBranchSha(running)).toBeNull();
  expect(await runs.countInProgress(queueId)).toBe(1);
});

test('a start-up within the window catches up too', async () => {
  await upgradedNow();
  const queue = new ObjectId();
  const running = sha();
  const started = await oldRun(queue, { testBranchSha: running, testedPullRequests: [pr(9)] });
  expect(await db.stores.testRuns.findInProgressByTestBranchSha(running)).toBeNull();
  const opened = await openMongoStores({ uri: db.uri });
  try {
    expect((await opened.testRuns.findInProgressByTestBranchSha(running))?.id).toBe(started.id);
    expect(await opened.testRuns.countInProgress(queue.toHexString())).toBe(1);
    expect((await opened.testRuns.latestForPr(queue.toHexString(), 9))?.id).toBe(started.id);
  } finally {
    await opened.close();
  }
});

test('a mark set without its time (by the version that introduced it) counts as set now, and gets the time', async () => {
  for (const collection of marks()) await collection.updateOne({ _id: 'complete' } as never, { $unset: { at: '' } });
  const queue = new ObjectId();
  const running = sha();
  const started = await oldRun(queue, { testBranchSha: running });
  const before = Date.now();
  await db.stores.testRuns.prune(new Date());
  expect((await db.stores.testRuns.findInProgressByTestBranchSha(running))?.id).toBe(started.id);
  for (const collection of marks()) {
    const at = (await collection.findOne({ _id: 'complete' } as never))?.at as Date;
    expect(at.getTime()).toBeGreaterThanOrEqual(before);
  }
});

test('once the marks are older than the window, neither prune nor a start-up reads test_runs', async () => {
  for (const collection of marks()) await collection.updateOne({ _id: 'complete' } as never, { $set: { at: ago(CATCH_UP_WINDOW_MS + 1_000) } });
  const queue = new ObjectId();
  const running = sha();
  await oldRun(queue, { testBranchSha: running, testedPullRequests: [pr(10)] });
  const find = jest.spyOn(storesModel(db.raw.databaseName, 'test_runs'), 'find');
  try {
    await db.stores.testRuns.prune(new Date());
    expect(await catchUpRuns(connection(), new Date())).toBe(0);
    expect(find).not.toHaveBeenCalled();
  } finally {
    find.mockRestore();
  }
  expect(await db.stores.testRuns.findInProgressByTestBranchSha(running)).toBeNull();
  expect(await db.stores.testRuns.countInProgress(queue.toHexString())).toBe(0);
  expect(await db.stores.testRuns.latestForPr(queue.toHexString(), 10)).toBeNull();
});

test('the catch-up points no PR at a probe not adopted (it decides nothing), and at one adopted', async () => {
  await upgradedNow();
  const runs = db.stores.testRuns;
  const queueId = new ObjectId().toHexString();
  const batch = await runs.insert(testRunFixture(queueId, { engineRunId: 'batch', testBranchSha: null, testedPullRequests: [pr(30), pr(31)], createdAt: ago(HOUR / 3) }));
  const probe = await runs.insert(testRunFixture(queueId, { engineRunId: 'probe', testBranchSha: null, testedPullRequests: [pr(30)], createdAt: ago(HOUR / 4), probeOf: 'batch' }));
  expect((await runs.latestForPr(queueId, 30))?.id).toBe(batch.id);
  await runs.prune(new Date());
  expect((await runs.latestForPr(queueId, 30))?.id).toBe(batch.id);
  await runs.adoptProbe(probe.id);
  expect((await runs.latestForPr(queueId, 30))?.id).toBe(probe.id);
  await runs.prune(new Date());
  expect((await runs.latestForPr(queueId, 30))?.id).toBe(probe.id);
});
