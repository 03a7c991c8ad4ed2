/**
 * A run is found by its test branch sha (a check result, a push to the target branch) through a pointer read by
 * _id: the local FerretDB answers any other filter by reading every run ever stored. Runs stored before pointers
 * existed get them once at start-up, and a deleted queue takes its runs' pointers with it.
 */
import { jest } from '@jest/globals';
import { MongoClient, ObjectId } from 'mongodb';
import type { Connection } from 'mongoose';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { ensureTestRunShas } from '../../src/adapters/mongo/test-run-shas.js';
import { createTestDatabaseUri, dropTestDatabase } from '../support/test-database.js';
import { testRunFixture } from '../support/test-run-fixture.js';
import { insertQueue, storesModel, useRunnerDatabaseWithDriver } from './support/runner-fixture.js';

const db = useRunnerDatabaseWithDriver('test_run_shas');

let shas = 0;
/** A fresh hex sha per call. */
const sha = () => (++shas).toString(16).padStart(40, 'a');
const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 10, minutes));

test('a run is found by its sha while in progress, and its queue tested that commit', async () => {
  const queueId = new ObjectId().toHexString();
  const otherQueue = new ObjectId().toHexString();
  const runs = db.stores.testRuns;
  const running = sha();
  const run = await runs.insert(testRunFixture(queueId, { testBranchSha: running }));
  expect((await runs.findInProgressByTestBranchSha(running))?.id).toBe(run.id);
  expect(await runs.testedCommit(queueId, running)).toBe(true);
  expect(await runs.testedCommit(otherQueue, running)).toBe(false);

  // Finished: no longer in progress, still a commit the queue tested.
  await runs.update(run.id, { status: 'succeeded', finishedAt: at(1) });
  expect(await runs.findInProgressByTestBranchSha(running)).toBeNull();
  expect(await runs.testedCommit(queueId, running)).toBe(true);

  // A sha no run has (a PR head).
  const unknown = sha();
  expect(await runs.findInProgressByTestBranchSha(unknown)).toBeNull();
  expect(await runs.testedCommit(queueId, unknown)).toBe(false);
});

test('a sha given by an update (the runner starts a run, then learns its commit) is found', async () => {
  const queueId = new ObjectId().toHexString();
  const runs = db.stores.testRuns;
  const later = sha();
  const run = await runs.insert(testRunFixture(queueId, { engineRunId: 'r1', testBranchSha: null }));
  expect(await runs.findInProgressByTestBranchSha(later)).toBeNull();
  expect(await runs.testedCommit(queueId, later)).toBe(false);
  await runs.update(run.id, { testBranch: 'mq/main/r1', testBranchSha: later });
  expect(await runs.findInProgressByTestBranchSha(later)).toMatchObject({ id: run.id, queueId, testBranchSha: later });
  expect(await runs.testedCommit(queueId, later)).toBe(true);
  // A replayed start answers the run stored, and its pointer names it once.
  expect((await runs.insert(testRunFixture(queueId, { engineRunId: 'r1', testBranchSha: later }))).id).toBe(run.id);
  expect(await db.raw.collection('test_run_shas').findOne({ _id: later } as never)).toEqual({ _id: later, runs: [{ queueId: new ObjectId(queueId), runId: new ObjectId(run.id) }] });
});

test('of two runs at one sha, the one in progress is found, whichever came first', async () => {
  const queueId = new ObjectId().toHexString();
  const runs = db.stores.testRuns;
  for (const cancelledFirst of [true, false]) {
    const shared = sha();
    const first = await runs.insert(testRunFixture(queueId, { testBranchSha: shared, createdAt: at(1) }));
    const second = await runs.insert(testRunFixture(queueId, { testBranchSha: shared, createdAt: at(2) }));
    const [cancelled, running] = cancelledFirst ? [first, second] : [second, first];
    await runs.update(cancelled.id, { status: 'cancelled', finishedAt: at(3) });
    expect((await runs.findInProgressByTestBranchSha(shared))?.id).toBe(running.id);
  }
});

test('lookups read runs by _id only, for a hit and for a miss', async () => {
  const queueId = new ObjectId().toHexString();
  const runs = db.stores.testRuns;
  const hit = sha();
  const done = sha();
  const miss = sha();
  await runs.insert(testRunFixture(queueId, { testBranchSha: hit }));
  const finished = await runs.insert(testRunFixture(queueId, { testBranchSha: done }));
  await runs.update(finished.id, { status: 'failed', finishedAt: at(4) });
  const spied = ['test_runs', 'test_run_shas'].map((collection) => storesModel(db.raw.databaseName, collection));
  const findOne = spied.map((model) => jest.spyOn(model, 'findOne'));
  const scans = spied.flatMap((model) => [jest.spyOn(model, 'find'), jest.spyOn(model, 'countDocuments'), jest.spyOn(model, 'aggregate')]);
  try {
    expect(await runs.findInProgressByTestBranchSha(hit)).not.toBeNull();
    expect(await runs.findInProgressByTestBranchSha(done)).toBeNull();
    expect(await runs.findInProgressByTestBranchSha(miss)).toBeNull();
    expect(await runs.testedCommit(queueId, hit)).toBe(true);
    expect(await runs.testedCommit(queueId, miss)).toBe(false);
    for (const scan of scans) expect(scan).not.toHaveBeenCalled();
    // findById and exists both go through findOne: every filter is exactly an _id.
    const filters = findOne.flatMap((spy) => spy.mock.calls.map((call) => Object.keys(call[0] ?? {})));
    expect(filters.length).toBeGreaterThan(0);
    expect(filters.filter((keys) => keys.length !== 1 || keys[0] !== '_id')).toEqual([]);
  } finally {
    for (const spy of [...findOne, ...scans]) spy.mockRestore();
  }
});

test('a deleted queue takes its runs’ pointers with it, and leaves another queue’s at the same sha', async () => {
  const queue = await insertQueue(db.stores, 'shas-gone');
  const other = new ObjectId().toHexString();
  const runs = db.stores.testRuns;
  const own = sha();
  const shared = sha();
  await runs.insert(testRunFixture(queue.id, { testBranchSha: own }));
  await runs.insert(testRunFixture(queue.id, { testBranchSha: shared, status: 'succeeded', finishedAt: at(5) }));
  const kept = await runs.insert(testRunFixture(other, { testBranchSha: shared }));
  await db.stores.queues.delete(queue.id);
  expect(await db.raw.collection('test_run_shas').countDocuments({ _id: own } as never)).toBe(0);
  expect(await db.raw.collection('test_run_shas').findOne({ _id: shared } as never)).toEqual({ _id: shared, runs: [{ queueId: new ObjectId(other), runId: new ObjectId(kept.id) }] });
  expect(await runs.findInProgressByTestBranchSha(own)).toBeNull();
  expect(await runs.testedCommit(queue.id, own)).toBe(false);
  expect(await runs.testedCommit(queue.id, shared)).toBe(false);
  expect((await runs.findInProgressByTestBranchSha(shared))?.id).toBe(kept.id);
});

test('a pointer to a run gone is skipped', async () => {
  const queueId = new ObjectId().toHexString();
  const gone = sha();
  const run = await db.stores.testRuns.insert(testRunFixture(queueId, { testBranchSha: gone }));
  await db.raw.collection('test_runs').deleteOne({ _id: new ObjectId(run.id) });
  expect(await db.stores.testRuns.findInProgressByTestBranchSha(gone)).toBeNull();
});

test('runs stored before pointers existed get them when the stores open, once', async () => {
  const legacy = await createTestDatabaseUri('test_run_shas_legacy');
  const raw = await new MongoClient(legacy.uri).connect();
  const queueId = new ObjectId();
  const legacyRun = (testBranchSha: string | null, status: string, minute: number) => ({
    _id: new ObjectId(),
    ...testRunFixture(queueId.toHexString(), { testBranchSha, status: status as 'in_progress', createdAt: at(minute) }),
    queueId,
    testedPrNumbers: [],
  });
  try {
    const running = sha();
    const finished = sha();
    const [cancelled, inProgress, succeeded, unstarted] = [legacyRun(running, 'cancelled', 1), legacyRun(running, 'in_progress', 2), legacyRun(finished, 'succeeded', 3), legacyRun(null, 'in_progress', 4)];
    const stored = [cancelled, inProgress, succeeded, unstarted];
    await raw.db().collection('test_runs').insertMany(stored);
    const opened = await openMongoStores({ uri: legacy.uri });
    try {
      expect((await opened.testRuns.findInProgressByTestBranchSha(running))?.id).toBe(inProgress._id.toHexString());
      expect(await opened.testRuns.findInProgressByTestBranchSha(finished)).toBeNull();
      expect(await opened.testRuns.testedCommit(queueId.toHexString(), finished)).toBe(true);
      // Oldest first in the pointer, as the store adds them.
      expect((await raw.db().collection('test_run_shas').findOne({ _id: running } as never))?.runs).toEqual([cancelled, inProgress].map((run) => ({ queueId, runId: run._id })));

      // Once: a later start finds the mark and reads no run (one stored underneath now stays without a pointer).
      const late = sha();
      await raw.db().collection('test_runs').insertOne(legacyRun(late, 'in_progress', 5));
      const connection = storesModel(legacy.dbName, 'test_runs').db as Connection;
      const find = jest.spyOn(storesModel(legacy.dbName, 'test_runs'), 'find');
      try {
        expect(await ensureTestRunShas(connection)).toBe(0);
        expect(find).not.toHaveBeenCalled();
      } finally {
        find.mockRestore();
      }
      expect(await opened.testRuns.findInProgressByTestBranchSha(late)).toBeNull();
    } finally {
      await opened.close();
    }
  } finally {
    await raw.close();
    await dropTestDatabase(legacy);
  }
});

// The checks a run's policy binds to one App are read back with the run, by its sha, when its results are judged.
test('the required checks bound to one App are kept with the run and read back by its sha', async () => {
  const queueId = new ObjectId().toHexString();
  const running = sha();
  const run = await db.stores.testRuns.insert(testRunFixture(queueId, { testBranchSha: running }));
  expect((await db.stores.testRuns.findInProgressByTestBranchSha(running))?.requiredCheckApps).toBeUndefined();
  await db.stores.testRuns.update(run.id, { requiredStatuses: ['ci'], requiredCheckApps: [{ name: 'ci', appId: 15368 }] });
  expect((await db.stores.testRuns.findInProgressByTestBranchSha(running))?.requiredCheckApps).toEqual([{ name: 'ci', appId: 15368 }]);
});
