/**
 * The two decision cursors on the local FerretDB: the round advances
 * `recordedThrough` while the host-action loop advances `actedThrough`, at the
 * same time. FerretDB applies an update by rewriting the whole document, so
 * cursors sharing one document could undo each other; neither may move back.
 */
import mongoose from 'mongoose';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import type { Stores } from '../../src/ports/stores.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';

let database: TestDatabaseUri;
let stores: Stores;
beforeAll(async () => {
  database = await createTestDatabaseUri('cursors');
  stores = await openMongoStores({ uri: database.uri });
});
afterAll(async () => {
  await stores.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

test('advanced by their two loops at once, each cursor ends at the last version its loop gave', async () => {
  const queueId = 'queue-concurrent';
  // As in the runner: each cursor has one loop advancing it step by step; the two loops overlap.
  const loop = async (cursor: 'recordedThrough' | 'actedThrough', step: number) => {
    for (let v = 1; v <= 40; v++) await stores.engine.advanceCursor(queueId, cursor, v * step);
  };
  await Promise.all([loop('recordedThrough', 1), loop('actedThrough', 2)]);
  expect(await stores.engine.cursors(queueId)).toEqual({ recordedThrough: 40, actedThrough: 80 });
});

test('a late, lower version does not move a cursor back', async () => {
  const queueId = 'queue-late';
  await stores.engine.advanceCursor(queueId, 'actedThrough', 7);
  await stores.engine.advanceCursor(queueId, 'actedThrough', 3);
  expect(await stores.engine.cursors(queueId)).toEqual({ recordedThrough: 0, actedThrough: 7 });
});

test('cursors stored before, both in one document under the queue id, are read and only move forward', async () => {
  const queueId = 'queue-before';
  const connection = await mongoose.createConnection(database.uri).asPromise();
  try {
    await connection.collection('queue_engine_cursors').insertOne({ _id: queueId as never, recordedThrough: 12, actedThrough: 9 });
  } finally {
    await connection.close();
  }
  expect(await stores.engine.cursors(queueId)).toEqual({ recordedThrough: 12, actedThrough: 9 });
  await stores.engine.advanceCursor(queueId, 'actedThrough', 11);
  await stores.engine.advanceCursor(queueId, 'recordedThrough', 5);
  expect(await stores.engine.cursors(queueId)).toEqual({ recordedThrough: 12, actedThrough: 11 });
  await stores.engine.remove(queueId);
  expect(await stores.engine.cursors(queueId)).toEqual({ recordedThrough: 0, actedThrough: 0 });
});
