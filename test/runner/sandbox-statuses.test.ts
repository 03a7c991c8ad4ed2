/**
 * The sandbox shows the queue's statuses of many PRs in one bulk write
 * (GroupedWrites): every PR gets its own status, a PR never seen gets one
 * too (upsert), and a later status replaces an earlier one. A run's PRs are read by _id.
 */
import { jest } from '@jest/globals';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { defaultPullRequest } from '../../src/adapters/sandbox/sandbox-repository.js';
import type { Stores } from '../../src/ports/stores.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';
import { storesModel } from './support/runner-fixture.js';

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

test('a PR stored before (shaped by a demo) keeps what it is when a status for it goes in the same write as statuses for PRs never stored', async () => {
  const repoKey = 'sandbox/demo/mixed';
  await stores.sandbox.savePullRequest(repoKey, { ...defaultPullRequest(repoKey, 2), title: 'Shaped' });
  // PR 2 is stored; 1 and 3 are not; 3 gets two statuses in the same write, in order.
  await Promise.all([
    stores.sandbox.setQueueStatus(repoKey, 1, { state: 'PENDING', reason: 'ready', position: 1 }),
    stores.sandbox.setQueueStatus(repoKey, 2, { state: 'PENDING', reason: 'ready', position: 2 }),
    stores.sandbox.setQueueStatus(repoKey, 3, { state: 'PENDING', reason: 'ready', position: 3 }),
    stores.sandbox.setQueueStatus(repoKey, 3, { state: 'TESTING', reason: 'test_started' }),
  ]);
  const [one, two, three] = await stores.sandbox.pullRequests(repoKey, [1, 2, 3]).then((prs) => [1, 2, 3].map((n) => prs.find((pr) => pr.number === n)));
  expect(one?.queueStatus).toEqual({ state: 'PENDING', reason: 'ready', position: 1 });
  expect(two).toMatchObject({ title: 'Shaped', queueStatus: { state: 'PENDING', reason: 'ready', position: 2 } });
  expect(three?.queueStatus).toEqual({ state: 'TESTING', reason: 'test_started' });
});

test('the PRs of a run are read by _id, one each (no query the local FerretDB answers by reading every sandbox PR), unknown ones left out', async () => {
  const repoKey = 'sandbox/demo/reads';
  await Promise.all([1, 2].map((n) => stores.sandbox.setQueueStatus(repoKey, n, { state: 'PENDING', reason: 'ready' })));
  const find = jest.spyOn(storesModel(database.dbName, 'sandbox_pull_requests'), 'find');
  try {
    const prs = await stores.sandbox.pullRequests(repoKey, [2, 1, 2, 99]);
    expect(prs.map((pr) => pr.number).sort()).toEqual([1, 2]);
    expect(find).not.toHaveBeenCalled();
  } finally {
    find.mockRestore();
  }
});
