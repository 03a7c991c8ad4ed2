/**
 * The queue record read by repository and branch: callers that accept a recent
 * record share one read under way (concurrent submits whose record aged out make
 * one query, not one each); a caller that needs it fresh reads it itself, and a
 * change of the queue is seen at once.
 */
import mongoose from 'mongoose';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import type { Stores } from '../../src/ports/stores.js';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';

let database: TestDatabaseUri;
let stores: Stores;
let queries = 0;
beforeAll(async () => {
  database = await createTestDatabaseUri('queue_records');
  stores = await openMongoStores({ uri: database.uri });
  mongoose.set('debug', (collection: string, method: string) => {
    if (collection === 'queues' && method === 'findOne') queries++;
  });
});
afterAll(async () => {
  mongoose.set('debug', false);
  await stores.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

test('concurrent reads that accept a recent record share one query; fresh reads and changes are not served stale', async () => {
  const repo = { host: 'sandbox', owner: 'records', name: 'shared' };
  const inserted = await stores.queues.insert({ repo, targetBranch: 'main', config: { ...DEFAULT_QUEUE_CONFIG }, requestedState: 'RUNNING', modeSwitchStartedAt: null, createdAt: new Date(), updatedAt: new Date() });
  if (!inserted.ok) throw new Error('not inserted');
  queries = 0;
  const found = await Promise.all(Array.from({ length: 20 }, () => stores.queues.find(repo, 'main', { maxAgeMs: 1000 })));
  expect(found.every((record) => record?.id === inserted.value.id)).toBe(true);
  expect(queries).toBe(1);
  // Remembered for a second.
  await stores.queues.find(repo, 'main', { maxAgeMs: 1000 });
  expect(queries).toBe(1);
  // Callers that need the record as it is now read it each.
  queries = 0;
  await Promise.all([stores.queues.find(repo, 'main'), stores.queues.find(repo, 'main')]);
  expect(queries).toBe(2);
  // A change is seen by the next recent read at once.
  await stores.queues.update(inserted.value.id, { requestedState: 'PAUSED', updatedAt: new Date() });
  expect((await stores.queues.find(repo, 'main', { maxAgeMs: 1000 }))?.requestedState).toBe('PAUSED');
});
