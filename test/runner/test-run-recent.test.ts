/**
 * What views, metrics, the reconcile and run starts ask of test runs ("the queue now") is read from copies of the
 * runs in progress, finished lately, and each queue's latest, and "the PR's latest run" through a pointer read by
 * _id: the local FerretDB answers any other filter on `test_runs` by reading every run ever stored.
 */
import { jest } from '@jest/globals';
import { MongoClient, ObjectId, type Db } from 'mongodb';
import type { Connection } from 'mongoose';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { ensureRecentRuns, RECENT_RUNS_WINDOW_MS } from '../../src/adapters/mongo/test-run-recent.js';
import type { TestedPullRequest, TestRunRecord } from '../../src/domain/records.js';
import type { TestRunStore } from '../../src/ports/stores.js';
import { createTestDatabaseUri, dropTestDatabase } from '../support/test-database.js';
import { testRunFixture } from '../support/test-run-fixture.js';
import { insertQueue, storesModel, useRunnerDatabaseWithDriver } from './support/runner-fixture.js';

const db = useRunnerDatabaseWithDriver('test_run_recent');

const HOUR = 60 * 60 * 1000;
const ago = (ms: number) => new Date(Date.now() - ms);
const pr = (prNumber: number): TestedPullRequest => ({ entryId: `e${prNumber}`, prNumber, headSha: `head${prNumber}`, title: `PR ${prNumber}`, url: '' });
const ids = (runs: Array<{ id: string } | { _id: ObjectId }>) => runs.map((run) => ('id' in run ? run.id : run._id.toHexString())).sort();
const BASE = 'e'.repeat(40);
let engineRuns = 0;

type Finished = { status: 'succeeded' | 'failed' | 'cancelled'; finishedAt: Date };
/** A run as the runner stores it: inserted in progress, then finished by an update. */
async function run(runs: TestRunStore, queueId: string, prs: number[], createdAt: Date, finished?: Finished): Promise<TestRunRecord> {
  const record = await runs.insert(
    testRunFixture(queueId, { engineRunId: `r${++engineRuns}`, baseSha: BASE, testBranchSha: null, testedPullRequests: prs.map(pr), createdAt }),
  );
  await runs.update(record.id, { testBranch: `mq/main/${record.id}`, testBranchSha: new ObjectId().toHexString() });
  if (finished) await runs.update(record.id, finished);
  return (await runs.findById(queueId, record.id)) as TestRunRecord;
}

/**
 * Queue A: one run in progress (PRs 1, 2), one passed an hour ago (PR 2), two finished days ago (PRs 1 and 3);
 * queue B: one run, finished days ago, still its latest.
 */
async function twoQueues(runs: TestRunStore) {
  const [a, b] = [new ObjectId().toHexString(), new ObjectId().toHexString()];
  const oldest = await run(runs, a, [1], ago(100 * HOUR), { status: 'failed', finishedAt: ago(99 * HOUR) });
  const old = await run(runs, a, [3], ago(80 * HOUR), { status: 'cancelled', finishedAt: ago(79 * HOUR) });
  const passed = await run(runs, a, [2], ago(2 * HOUR), { status: 'succeeded', finishedAt: ago(HOUR) });
  const running = await run(runs, a, [1, 2], ago(HOUR / 2));
  const onlyB = await run(runs, b, [1], ago(60 * HOUR), { status: 'succeeded', finishedAt: ago(59 * HOUR) });
  return { a, b, oldest, old, passed, running, onlyB };
}

/** The answers the store gave before the copies and pointers, from the old queries on every run. */
function oldAnswers(raw: Db) {
  const runs = raw.collection('test_runs');
  const queue = (id: string) => new ObjectId(id);
  return {
    inProgress: () => runs.find({ status: 'in_progress' }).toArray(),
    builtOn: async (id: string, baseSha: string) =>
      (await runs.find({ queueId: queue(id), baseSha, status: { $in: ['in_progress', 'succeeded'] } }).toArray()).filter((doc) => doc.testBranchSha !== null),
    countInProgress: (id: string) => runs.countDocuments({ queueId: queue(id), status: 'in_progress' }),
    latestFinished: (id: string) => runs.find({ queueId: queue(id), finishedAt: { $ne: null } }).sort({ finishedAt: -1, _id: -1 }).limit(1).toArray(),
    latestForPr: (id: string, prNumber: number) => runs.find({ queueId: queue(id), testedPrNumbers: prNumber }).sort({ createdAt: -1, _id: -1 }).limit(1).toArray(),
    finishedSince: (id: string, since: Date) => runs.find({ queueId: queue(id), finishedAt: { $gte: since } }).toArray(),
  };
}

async function expectOldAnswers(runs: TestRunStore, raw: Db, queues: string[], prNumbers: number[]): Promise<void> {
  const old = oldAnswers(raw);
  const mine = (id: string | ObjectId) => queues.includes(typeof id === 'string' ? id : id.toHexString());
  const stored = (await old.inProgress()).filter((doc) => mine(doc.queueId as ObjectId)).map((doc) => ({ _id: doc._id }));
  expect(ids((await runs.listInProgress()).filter((run) => mine(run.queueId)))).toEqual(ids(stored));
  for (const queue of queues) {
    expect(await runs.countInProgress(queue)).toBe(await old.countInProgress(queue));
    expect(ids(await runs.listBuiltOn(queue, BASE))).toEqual(ids(await old.builtOn(queue, BASE)));
    expect(ids([await runs.latestFinished(queue)].filter((r) => r !== null))).toEqual(ids(await old.latestFinished(queue)));
    for (const since of [ago(24 * HOUR), ago(HOUR / 4), ago(7 * 24 * HOUR)]) expect(ids(await runs.listFinishedSince(queue, since))).toEqual(ids(await old.finishedSince(queue, since)));
    for (const prNumber of prNumbers) expect(ids([await runs.latestForPr(queue, prNumber)].filter((r) => r !== null))).toEqual(ids(await old.latestForPr(queue, prNumber)));
  }
}

test('the readers answer as the queries on every run did, before and after pruning, as runs start and finish', async () => {
  const runs = db.stores.testRuns;
  const { a, b, passed, running, onlyB } = await twoQueues(runs);
  await expectOldAnswers(runs, db.raw, [a, b], [1, 2, 3, 99]);
  await runs.prune(new Date());
  await expectOldAnswers(runs, db.raw, [a, b], [1, 2, 3, 99]);
  // Spelled out: the run in progress is PR 1's latest; queue B's run of days ago is still its latest finished.
  expect((await runs.latestForPr(a, 1))?.id).toBe(running.id);
  expect(await runs.latestForPr(a, 99)).toBeNull();
  expect((await runs.latestFinished(a))?.id).toBe(passed.id);
  expect((await runs.latestFinished(b))?.id).toBe(onlyB.id);
  expect(ids(await runs.listBuiltOn(a, BASE))).toEqual(ids([passed, running]));

  await runs.update(running.id, { status: 'failed', finishedAt: new Date(), failureStatuses: ['ci'] });
  await expectOldAnswers(runs, db.raw, [a, b], [1, 2, 3]);
  expect((await runs.latestFinished(a))?.id).toBe(running.id);
  expect(await runs.countInProgress(a)).toBe(0);
  const next = await run(runs, b, [4], new Date());
  await expectOldAnswers(runs, db.raw, [a, b], [1, 4]);
  expect((await runs.latestForPr(b, 4))?.id).toBe(next.id);
});

test('a PR tested twice points at its newer run, even when the older start is inserted again (the runner inserts each run twice)', async () => {
  const runs = db.stores.testRuns;
  const queueId = new ObjectId().toHexString();
  const first = testRunFixture(queueId, { engineRunId: 'twice-1', testedPullRequests: [pr(7)], createdAt: ago(2 * HOUR) });
  const second = testRunFixture(queueId, { engineRunId: 'twice-2', testedPullRequests: [pr(7), pr(8)], createdAt: ago(HOUR) });
  const older = await runs.insert(first);
  const newer = await runs.insert(second);
  expect((await runs.insert(first)).id).toBe(older.id);
  expect((await runs.latestForPr(queueId, 7))?.id).toBe(newer.id);
  expect((await runs.latestForPr(queueId, 8))?.id).toBe(newer.id);
  expect(await runs.latestForPr(queueId, 9)).toBeNull();
});

test('the readers read test_runs by _id only (a report reaching back past the window excepted)', async () => {
  const runs = db.stores.testRuns;
  const { a, b, running } = await twoQueues(runs);
  const spied = ['test_runs', 'test_run_prs'].map((collection) => storesModel(db.raw.databaseName, collection));
  const findOne = spied.map((model) => jest.spyOn(model, 'findOne'));
  const scans = spied.flatMap((model) => [jest.spyOn(model, 'find'), jest.spyOn(model, 'countDocuments'), jest.spyOn(model, 'aggregate')]);
  try {
    for (const queue of [a, b]) {
      await runs.listInProgress();
      await runs.countInProgress(queue);
      await runs.listBuiltOn(queue, BASE);
      await runs.latestFinished(queue);
      // The runner's CI history (24 h), metrics (1 h), a dashboard update (a recent poll).
      for (const since of [ago(24 * HOUR), ago(HOUR), ago(5_000)]) await runs.listFinishedSince(queue, since);
      await runs.latestForPr(queue, 1);
      await runs.latestForPr(queue, 99);
    }
    for (const scan of scans) expect(scan).not.toHaveBeenCalled();
    const filters = findOne.flatMap((spy) => spy.mock.calls.map((call) => Object.keys(call[0] ?? {})));
    expect(filters.length).toBeGreaterThan(0);
    expect(filters.filter((keys) => keys.length !== 1 || keys[0] !== '_id')).toEqual([]);
    // Finishing a run with a copy writes both, and reads nothing.
    for (const spy of findOne) spy.mockClear();
    await runs.update(running.id, { status: 'succeeded', finishedAt: new Date() });
    for (const spy of findOne) expect(spy).not.toHaveBeenCalled();
  } finally {
    for (const spy of [...findOne, ...scans]) spy.mockRestore();
  }
});

test('the copies cover the runner’s CI history with time to spare', () => {
  // The runner asks for runs finished in the last 24 h (queue-runner.ts CI_HISTORY_WINDOW_MS).
  expect(RECENT_RUNS_WINDOW_MS).toBeGreaterThan(24 * HOUR);
});

test('pruning forgets runs finished before the window but each queue’s latest, and mends a copy left in progress', async () => {
  const runs = db.stores.testRuns;
  const { a, b, oldest, old, passed, running, onlyB } = await twoQueues(runs);
  const recent = db.raw.collection('test_runs_recent');
  const copies = async () => ids(await recent.find({ queueId: { $in: [new ObjectId(a), new ObjectId(b)] } }).toArray());
  expect(await copies()).toEqual(ids([oldest, old, passed, running, onlyB]));
  await runs.prune(new Date());
  expect(await copies()).toEqual(ids([passed, running, onlyB]));
  // A copy is a full one.
  const { _id, ...copy } = (await recent.findOne({ _id: new ObjectId(passed.id) })) ?? {};
  expect(copy).toEqual(await db.raw.collection('test_runs').findOne({ _id: new ObjectId(passed.id) }, { projection: { _id: 0 } }));

  // The run finished but its copy not (a failure between the two writes): pruning takes the run as it is.
  await db.raw.collection('test_runs').updateOne({ _id: new ObjectId(running.id) }, { $set: { status: 'succeeded', finishedAt: new Date() } });
  expect(await runs.countInProgress(a)).toBe(1);
  await runs.prune(new Date());
  expect(await runs.countInProgress(a)).toBe(0);
  expect((await runs.latestFinished(a))?.id).toBe(running.id);

  // A day later the run passed an hour before goes too; each queue's latest stays.
  await runs.prune(new Date(Date.now() + 30 * HOUR));
  expect(await copies()).toEqual(ids([running, onlyB]));
});

test('a start inserted again after its copy was pruned copies the run as stored, not the start', async () => {
  const runs = db.stores.testRuns;
  const queueId = new ObjectId().toHexString();
  const start = testRunFixture(queueId, { engineRunId: 'replayed', createdAt: ago(50 * HOUR) });
  const replayed = await runs.insert(start);
  await runs.update(replayed.id, { status: 'cancelled', finishedAt: ago(49 * HOUR) });
  await run(runs, queueId, [], ago(2 * HOUR), { status: 'succeeded', finishedAt: ago(HOUR) });
  await runs.prune(new Date());
  expect(await db.raw.collection('test_runs_recent').countDocuments({ _id: new ObjectId(replayed.id) })).toBe(0);
  expect((await runs.insert(start)).status).toBe('cancelled');
  expect(await runs.countInProgress(queueId)).toBe(0);
  expect((await runs.listInProgress()).map((r) => r.id)).not.toContain(replayed.id);
  // An update of a run without a copy gives it one.
  await db.raw.collection('test_runs_recent').deleteOne({ _id: new ObjectId(replayed.id) });
  await runs.update(replayed.id, { failureStatuses: ['late'] });
  expect(await db.raw.collection('test_runs_recent').findOne({ _id: new ObjectId(replayed.id) })).toMatchObject({ status: 'cancelled', failureStatuses: ['late'] });
});

test('a deleted queue takes its copies and PR pointers with it, and leaves another queue’s', async () => {
  const runs = db.stores.testRuns;
  const queue = await insertQueue(db.stores, 'recent-gone');
  const other = new ObjectId().toHexString();
  await run(runs, queue.id, [1], ago(HOUR));
  await run(runs, queue.id, [2], ago(2 * HOUR), { status: 'succeeded', finishedAt: ago(HOUR) });
  const kept = await run(runs, other, [1], ago(HOUR));
  await db.stores.queues.delete(queue.id);
  expect(await db.raw.collection('test_runs_recent').countDocuments({ queueId: new ObjectId(queue.id) })).toBe(0);
  expect(await db.raw.collection('test_run_prs').countDocuments({ _id: { $in: [`${queue.id}:1`, `${queue.id}:2`] } } as never)).toBe(0);
  expect(await runs.latestForPr(queue.id, 1)).toBeNull();
  expect(await runs.latestFinished(queue.id)).toBeNull();
  expect((await runs.latestForPr(other, 1))?.id).toBe(kept.id);
  expect(ids(await runs.listInProgress())).toContain(kept.id);
});

test('runs stored before the copies and pointers existed get them when the stores open, once', async () => {
  const legacy = await createTestDatabaseUri('test_run_recent_legacy');
  const raw = await new MongoClient(legacy.uri).connect();
  const [a, b] = [new ObjectId(), new ObjectId()];
  const legacyRun = (queueId: ObjectId, prs: number[], createdAt: Date, finished?: Finished) => ({
    _id: new ObjectId(),
    ...testRunFixture(queueId.toHexString(), { baseSha: BASE, testedPullRequests: prs.map(pr), createdAt, ...finished }),
    queueId,
    testedPrNumbers: prs,
  });
  try {
    const oldest = legacyRun(a, [1], ago(100 * HOUR), { status: 'failed', finishedAt: ago(99 * HOUR) });
    const old = legacyRun(a, [3], ago(80 * HOUR), { status: 'cancelled', finishedAt: ago(79 * HOUR) });
    const passed = legacyRun(a, [2], ago(2 * HOUR), { status: 'succeeded', finishedAt: ago(HOUR) });
    const running = legacyRun(a, [1, 2], ago(HOUR / 2));
    const onlyB = legacyRun(b, [1], ago(60 * HOUR), { status: 'succeeded', finishedAt: ago(59 * HOUR) });
    await raw.db().collection('test_runs').insertMany([oldest, old, passed, running, onlyB]);
    const opened = await openMongoStores({ uri: legacy.uri });
    try {
      expect(ids(await raw.db().collection('test_runs_recent').find({}).toArray())).toEqual(ids([passed, running, onlyB]));
      await expectOldAnswers(opened.testRuns, raw.db(), [a.toHexString(), b.toHexString()], [1, 2, 3, 99]);
      expect((await opened.testRuns.latestForPr(a.toHexString(), 1))?.id).toBe(running._id.toHexString());
      expect((await opened.testRuns.latestForPr(a.toHexString(), 3))?.id).toBe(old._id.toHexString());

      // Once: a later start finds the mark and reads no run (one stored underneath now stays without copy or pointer).
      const late = legacyRun(b, [5], ago(HOUR / 4));
      await raw.db().collection('test_runs').insertOne(late);
      const connection = storesModel(legacy.dbName, 'test_runs').db as Connection;
      const find = jest.spyOn(storesModel(legacy.dbName, 'test_runs'), 'find');
      try {
        expect(await ensureRecentRuns(connection)).toBe(0);
        expect(find).not.toHaveBeenCalled();
      } finally {
        find.mockRestore();
      }
      expect(await opened.testRuns.countInProgress(b.toHexString())).toBe(0);
      expect(await opened.testRuns.latestForPr(b.toHexString(), 5)).toBeNull();
    } finally {
      await opened.close();
    }
  } finally {
    await raw.close();
    await dropTestDatabase(legacy);
  }
});
