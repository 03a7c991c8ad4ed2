/**
 * The sandbox shows the queue's statuses of many PRs in one bulk write
 * (GroupedWrites): every PR gets its own status, a PR never seen gets one
 * too (upsert), and a later status replaces an earlier one.
 */
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import type { Stores } from '../../src/ports/stores.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';

let database: TestDatabaseUri;
let stores: Stores;
beforeAll(async () => {
  database = await createTestDatabaseUri('sandbox_statuses');
  stores = await openMongoStores({ uri: database.uri });
});
afterAll(async () => {
  await stores.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

test('statuses written at once each reach their own PR, and the last one written wins', async () => {
  const repoKey = 'sandbox/demo/statuses';
  const numbers = Array.from({ length: 30 }, (_, i) => i + 1);
  await Promise.all(numbers.map((n) => stores.sandbox.setQueueStatus(repoKey, n, { state: 'PENDING', reason: 'ready', position: n })));
  await Promise.all(numbers.filter((n) => n % 3 === 0).map((n) => stores.sandbox.setQueueStatus(repoKey, n, { state: 'TESTING', reason: 'test_started' })));
  const prs = await stores.sandbox.pullRequests(repoKey, numbers);
  expect(prs).toHaveLength(30);
  for (const pr of prs) {
    expect(pr.queueStatus).toEqual(pr.number % 3 === 0 ? { state: 'TESTING', reason: 'test_started' } : { state: 'PENDING', reason: 'ready', position: pr.number });
  }
});
