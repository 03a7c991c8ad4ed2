/**
 * Impacted targets are found by one read by _id: a pointer per PR head (and per
 * PR) names the newest set and its parts. Re-uploads replace, old heads are
 * pruned with their pointers (found in the PR's pointer, not by a query), and
 * sets stored before pointers existed get them at start-up.
 */
import { jest } from '@jest/globals';
import { MongoClient, ObjectId } from 'mongodb';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { createTestDatabaseUri, dropTestDatabase } from '../support/test-database.js';
import { storesModel, useRunnerDatabaseWithDriver } from './support/runner-fixture.js';

const db = useRunnerDatabaseWithDriver('targets_storage');

const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 10, minutes));

test('the newest upload of a head wins, any head without a sha; old heads are pruned with their pointers', async () => {
  const queueId = new ObjectId().toHexString();
  const { impactedTargets: targets } = db.stores;
  await targets.set({ queueId, prNumber: 5, sha: 'a1', targets: ['//x', '//y'], setAt: at(1) });
  await targets.set({ queueId, prNumber: 5, sha: 'a1', targets: ['//z'], setAt: at(2) });
  expect(await targets.latest(queueId, 5, 'a1')).toEqual({ queueId, prNumber: 5, sha: 'a1', targets: ['//z'], setAt: at(2) });
  expect(await targets.summary(queueId, 5, 'a1')).toEqual({ sha: 'a1', all: false, count: 1 });
  // The replaced upload's parts are gone: one set per head.
  expect(await db.raw.collection('impacted_target_sets').countDocuments({ queueId: new ObjectId(queueId) })).toBe(1);
  await targets.set({ queueId, prNumber: 5, sha: 'b2', targets: 'ALL', setAt: at(3) });
  expect(await targets.summary(queueId, 5)).toEqual({ sha: 'b2', all: true, count: 0 });
  expect((await targets.latest(queueId, 5))?.targets).toBe('ALL');
  expect(await targets.summary(queueId, 5, 'nope')).toBeNull();
  expect(await targets.summary(queueId, 6, 'a1')).toBeNull();
  // Three heads are kept per PR: a fourth prunes the oldest, and its pointer goes with it.
  await targets.set({ queueId, prNumber: 5, sha: 'c3', targets: ['//c'], setAt: at(4) });
  await targets.set({ queueId, prNumber: 5, sha: 'd4', targets: ['//d'], setAt: at(5) });
  expect(await targets.summary(queueId, 5, 'a1')).toBeNull();
  expect(await targets.latest(queueId, 5, 'a1')).toBeNull();
  expect((await targets.latest(queueId, 5, 'b2'))?.targets).toBe('ALL');
  expect((await targets.latest(queueId, 5))?.sha).toBe('d4');
});

test('a lookup reads the pointer by _id, not the set headers', async () => {
  const queueId = new ObjectId().toHexString();
  await db.stores.impactedTargets.set({ queueId, prNumber: 8, sha: 'e5', targets: ['//one', '//two'], setAt: at(6) });
  // With the headers gone, the pointer and the parts it names still answer.
  await db.raw.collection('impacted_target_sets').deleteMany({ queueId: new ObjectId(queueId) });
  expect((await db.stores.impactedTargets.latest(queueId, 8, 'e5'))?.targets).toEqual(['//one', '//two']);
  expect(await db.stores.impactedTargets.summary(queueId, 8, 'e5')).toEqual({ sha: 'e5', all: false, count: 2 });
});

test('sets stored before pointers existed get them when the stores open, parts found by their set', async () => {
  const legacy = await createTestDatabaseUri('targets_legacy');
  const raw = await new MongoClient(legacy.uri).connect();
  try {
    const queueId = new ObjectId();
    const older = new ObjectId();
    const newer = new ObjectId();
    await raw.db().collection('impacted_target_sets').insertMany([
      { _id: older, queueId, prNumber: 3, sha: 'f6', all: false, count: 1, parts: 1, setAt: at(1) },
      { _id: newer, queueId, prNumber: 3, sha: 'g7', all: false, count: 2, parts: 1, setAt: at(2) },
    ]);
    await raw.db().collection('impacted_target_parts').insertMany([
      { setId: older, part: 0, targets: ['//old'] },
      { setId: newer, part: 0, targets: ['//new', '//newer'] },
    ]);
    const opened = await openMongoStores({ uri: legacy.uri });
    try {
      expect((await opened.impactedTargets.latest(queueId.toHexString(), 3, 'f6'))?.targets).toEqual(['//old']);
      expect((await opened.impactedTargets.latest(queueId.toHexString(), 3))?.targets).toEqual(['//new', '//newer']);
      expect(await opened.impactedTargets.summary(queueId.toHexString(), 3, 'g7')).toEqual({ sha: 'g7', all: false, count: 2 });
      // Their pointers do not list the PR's uploads: the next upload finds them by their headers, and prunes the oldest.
      await opened.impactedTargets.set({ queueId: queueId.toHexString(), prNumber: 3, sha: 'h8', targets: ['//h'], setAt: at(3) });
      await opened.impactedTargets.set({ queueId: queueId.toHexString(), prNumber: 3, sha: 'i9', targets: ['//i'], setAt: at(4) });
      expect(await opened.impactedTargets.latest(queueId.toHexString(), 3, 'f6')).toBeNull();
      expect(await raw.db().collection('impacted_target_sets').countDocuments({ _id: older })).toBe(0);
      expect(await raw.db().collection('impacted_target_parts').countDocuments({ setId: older })).toBe(0);
      expect((await opened.impactedTargets.latest(queueId.toHexString(), 3, 'g7'))?.targets).toEqual(['//new', '//newer']);
    } finally {
      await opened.close();
    }
  } finally {
    await raw.close();
    await dropTestDatabase(legacy);
  }
});

test('a deleted queue takes its pointers with it', async () => {
  const queue = await db.stores.queues.insert({ repo: { host: 'sandbox', owner: 'targets', name: 'gone' }, targetBranch: 'main', config: { ...DEFAULT_QUEUE_CONFIG }, requestedState: 'RUNNING', modeSwitchStartedAt: null, createdAt: new Date(), updatedAt: new Date() });
  if (!queue.ok) throw new Error('not inserted');
  await db.stores.impactedTargets.set({ queueId: queue.value.id, prNumber: 1, sha: 'h8', targets: ['//t'], setAt: at(7) });
  expect(await db.raw.collection('impacted_target_heads').countDocuments({ _id: { $regex: `^${queue.value.id}:` } } as never)).toBe(2);
  await db.stores.queues.delete(queue.value.id);
  expect(await db.raw.collection('impacted_target_heads').countDocuments({ _id: { $regex: `^${queue.value.id}:` } } as never)).toBe(0);
  expect(await db.stores.impactedTargets.summary(queue.value.id, 1, 'h8')).toBeNull();
});

test('an upload finds what to prune in its PR pointer: no query of the set headers, whatever is stored', async () => {
  const queueId = new ObjectId().toHexString();
  const { impactedTargets: targets } = db.stores;
  const Sets = storesModel(db.raw.databaseName, 'impacted_target_sets');
  const find = jest.spyOn(Sets, 'find');
  try {
    for (const [minute, sha] of ['j1', 'k2', 'l3', 'm4', 'm4'].entries()) await targets.set({ queueId, prNumber: 9, sha, targets: [`//${sha}`], setAt: at(10 + minute) });
    expect(find).not.toHaveBeenCalled();
  } finally {
    find.mockRestore();
  }
  // Three heads kept (the re-upload of m4 replaced its first), their parts with them; j1 pruned with its pointer.
  expect(await db.raw.collection('impacted_target_sets').countDocuments({ queueId: new ObjectId(queueId) })).toBe(3);
  expect(await targets.latest(queueId, 9, 'j1')).toBeNull();
  expect((await targets.latest(queueId, 9, 'k2'))?.targets).toEqual(['//k2']);
  expect((await targets.latest(queueId, 9))?.sha).toBe('m4');
  const setIds = (await db.raw.collection('impacted_target_sets').find({ queueId: new ObjectId(queueId) }).toArray()).map((set) => set._id);
  expect(await db.raw.collection('impacted_target_parts').countDocuments({ setId: { $nin: setIds }, targets: { $in: ['//j1', '//k2', '//l3', '//m4'] } })).toBe(0);
});

