/**
 * Records with two writers in one process keep both writers' changes. The local FerretDB applies an update by
 * reading the document, changing it in Go and writing it back whole, so two updates of one document at once can
 * lose one (MongoDB's are atomic per document): the stores change such a record one change at a time.
 */
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import type { Stores } from '../../src/ports/stores.js';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';

let database: TestDatabaseUri;
let stores: Stores;
beforeAll(async () => {
  database = await createTestDatabaseUri('two_writers');
  stores = await openMongoStores({ uri: database.uri });
});
afterAll(async () => {
  await stores.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

test("an operator's settings change and the runner's note on the queue record, written at once, both hold", async () => {
  const repo = { host: 'sandbox', owner: 'records', name: 'two-writers' };
  const inserted = await stores.queues.insert({ repo, targetBranch: 'main', config: { ...DEFAULT_QUEUE_CONFIG }, requestedState: 'RUNNING', modeSwitchStartedAt: null, createdAt: new Date(), updatedAt: new Date() });
  if (!inserted.ok) throw new Error('not inserted');
  const id = inserted.value.id;
  for (let i = 1; i <= 20; i++) {
    const note = { since: new Date(i * 1000), message: `blocked ${i}` };
    await Promise.all([
      stores.queues.update(id, { config: { ...DEFAULT_QUEUE_CONFIG, concurrency: i }, updatedAt: new Date() }),
      stores.queues.update(id, { landingBlocked: note, updatedAt: new Date() }),
    ]);
    const stored = await stores.queues.findById(id);
    expect({ concurrency: stored?.config.concurrency, blocked: stored?.landingBlocked?.message }).toEqual({ concurrency: i, blocked: `blocked ${i}` });
  }
});

test("a subscription's change by its owner and a delivery failure recorded at once both hold", async () => {
  const at = new Date();
  const id = 'sub-two-writers';
  await stores.webhooks.insertSubscription({
    id,
    org: { host: 'sandbox', owner: 'records' },
    repo: null,
    url: 'https://hooks.example/0',
    eventTypes: null,
    description: null,
    secrets: [{ sealed: 'secret-0', createdAt: at, expiresAt: null }],
    disabledReason: null,
    disabledAt: null,
    failingSince: null,
    consecutiveFailures: 0,
    createdAt: at,
    updatedAt: at,
  });
  for (let i = 1; i <= 20; i++) {
    await Promise.all([
      stores.webhooks.updateSubscription(id, { url: `https://hooks.example/${i}`, secrets: [{ sealed: `secret-${i}`, createdAt: at, expiresAt: null }], updatedAt: new Date() }),
      stores.webhooks.recordFailure(id, new Date()),
    ]);
    const stored = await stores.webhooks.findSubscription(id);
    expect({ url: stored?.url, secret: stored?.secrets[0]?.sealed, failures: stored?.consecutiveFailures }).toEqual({ url: `https://hooks.example/${i}`, secret: `secret-${i}`, failures: i });
  }
});
