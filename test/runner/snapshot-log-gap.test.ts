/**
 * A load is the newest snapshot plus every decision after it. Were decisions right after the snapshot missing
 * (a compaction that ran between the load's two reads leaves it a log that starts later), replaying the rest
 * would give a wrong state: the load reads again, and when the hole stays it fails and names it.
 */
import { MongoClient } from 'mongodb';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';
import { claimEntry, insertQueue, quietHost, silentLog } from './support/runner-fixture.js';

let database: TestDatabaseUri;
let stores: Stores;
let client: MongoClient;
beforeAll(async () => {
  database = await createTestDatabaseUri('snapshot_gap');
  stores = await openMongoStores({ uri: database.uri });
  client = await new MongoClient(database.uri).connect();
});
afterAll(async () => {
  await client.close();
  await stores.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

test('a log that does not follow on from its snapshot is not loaded as if it did', async () => {
  const queue = await insertQueue(stores, 'gap');
  const runner = new QueueRunner({ stores, hosts: gitHostRegistry({ 'fake.example': quietHost() }), log: silentLog, owner: 'A', pollMs: 60_000 });
  await runner.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  for (let pr = 1; pr <= 2; pr++) expect(await runner.dispatch(queue.id, (await claimEntry(stores, queue.id, pr)).submitted)).toBe(true);
  await runner.settled(queue.id);
  await runner.stop();
  const whole = await stores.engine.load(queue.id);
  expect(whole!.snapshot.version).toBe(0);
  expect(whole!.decisions[0]!.version).toBe(1);
  // The first decision after the snapshot gone, as a compaction would take it for a newer snapshot.
  await client.db(database.dbName).collection('queue_engine_decisions').deleteOne({ queueId: queue.id, version: 1 });
  await expect(stores.engine.load(queue.id)).rejects.toThrow(`the log of queue ${queue.id} starts at version 2, after its newest snapshot's 0`);
});
