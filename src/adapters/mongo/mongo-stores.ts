import mongoose from 'mongoose';
import type { Stores } from '../../ports/stores.js';
import { mongoApiTokenStore } from './api-token-store.js';
import { mongoEngineStore } from './engine-store.js';
import { mongoSandboxStore } from './sandbox-store.js';
import { ensureSessionExpiryIndex, mongoSessionStore } from './session-store.js';
import { mongoDeliveryStore } from './delivery-store.js';
import { ensureTargetHeads, mongoImpactedTargetsStore } from './impacted-targets-store.js';
import { ensureEntryKeys, mongoQueueEntryStore } from './queue-entry-store.js';
import { mongoQueueStore } from './queue-store.js';
import { catchUpRuns } from './test-run-catch-up.js';
import { ensureRecentRuns } from './test-run-recent.js';
import { mongoTestRunStore } from './test-run-store.js';
import { ensureTestRunShas } from './test-run-shas.js';
import { mongoWebhookStore } from './webhook-store.js';

// Filters are built here from zod-validated primitives only (never a client's
// object), so no `$` operator can arrive from outside. strictQuery drops any
// path the schema does not declare.
mongoose.set('strictQuery', true);

export interface OpenStoresOptions {
  uri: string;
  /** Overrides the database named in the URI (tests use one per file). */
  dbName?: string;
  serverSelectionTimeoutMS?: number;
}

/** Connects to MongoDB (or FerretDB), declares the indexes, and returns the stores. */
export async function openMongoStores(options: OpenStoresOptions): Promise<Stores> {
  const connection = mongoose.createConnection(options.uri, {
    dbName: options.dbName,
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000,
    // Indexes are created once below, not lazily on first use.
    autoIndex: false,
  });
  await connection.asPromise();

  const stores: Stores = {
    tokens: mongoApiTokenStore(connection),
    queues: mongoQueueStore(connection),
    entries: mongoQueueEntryStore(connection),
    impactedTargets: mongoImpactedTargetsStore(connection),
    testRuns: mongoTestRunStore(connection),
    engine: mongoEngineStore(connection),
    sandbox: mongoSandboxStore(connection),
    deliveries: mongoDeliveryStore(connection),
    webhooks: mongoWebhookStore(connection),
    sessions: mongoSessionStore(connection),
    async ping() {
      try {
        await connection.db?.admin().ping();
        return connection.db !== undefined;
      } catch {
        return false;
      }
    },
    async close() {
      await connection.close();
    },
  };
  await Promise.all(Object.values(connection.models).map((model) => model.createIndexes()));
  await ensureEntryKeys(connection);
  await ensureTargetHeads(connection);
  await ensureTestRunShas(connection);
  await ensureRecentRuns(connection);
  // The marks above may be young: replicas of a version without pointers may still be writing runs (test-run-catch-up.ts).
  await catchUpRuns(connection, new Date());
  await ensureSessionExpiryIndex(connection);
  return stores;
}
