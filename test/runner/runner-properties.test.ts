/**
 * The engine's safety properties, now through the runtime around it: random
 * submits, CI results (breaking, flaky, conflicting), pushes, cancels,
 * priority changes, restarts, config changes, base moves, refused merges and
 * runner restarts (a new replica rebuilds the state from snapshot and log).
 * After every step the database, the engine and the host agree; the host
 * double refuses any merge of untested, broken or already merged content.
 */
import fc from 'fast-check';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import type { Stores } from '../../src/ports/stores.js';
import { command } from '../engine/support/engine-world.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';
import { RunnerWorld } from './support/runner-world.js';

/** Each run costs a few hundred database round trips: few runs here, more with MQ_RUNNER_PROPERTY_RUNS. */
const RUNS = Number(process.env.MQ_RUNNER_PROPERTY_RUNS ?? 12);

let database: TestDatabaseUri;
let stores: Stores;
beforeAll(async () => {
  database = await createTestDatabaseUri('runner_props');
  stores = await openMongoStores({ uri: database.uri });
});
afterAll(async () => {
  await stores.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

let worlds = 0;
test('through the runner and the store: only tested content merges, never twice; states agree everywhere; every PR ends or waits', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 30 }), async (cmds) => {
      const world = await RunnerWorld.create(stores, `props${++worlds}`);
      try {
        for (const c of cmds) await world.apply(c);
        await world.drain();
      } finally {
        await world.close();
      }
    }),
    { numRuns: RUNS },
  );
}, 240_000);
