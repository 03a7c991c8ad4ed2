/**
 * What the runner's tests on a real database share: the file's own database
 * and stores, a host double that starts runs and refuses nothing it is not
 * asked about, a queue and submissions recorded as the API records them.
 */
import { MongoClient, type Db } from 'mongodb';
import mongoose, { type Model } from 'mongoose';
import { openMongoStores } from '../../../src/adapters/mongo/mongo-stores.js';
import { DEFAULT_QUEUE_CONFIG } from '../../../src/domain/queue-config.js';
import type { PullRequestFacts, QueueEntryRecord, QueueRecord } from '../../../src/domain/records.js';
import type { GitHost, MergeOutcome, MergeRequest } from '../../../src/ports/git-host.js';
import type { QueueRunner } from '../../../src/runner/queue-runner.js';
import type { Stores } from '../../../src/ports/stores.js';
import { engineFacts } from '../../../src/runner/engine-inputs.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../../support/test-database.js';

export const silentLog = { info() {}, warn() {}, error() {} };

/** Opens the file's database before its tests and drops it after; `stores` is valid inside tests. */
export function useRunnerDatabase(prefix: string): { readonly stores: Stores } {
  return useDatabase(prefix, false);
}

/**
 * As useRunnerDatabase, plus a driver on the same database for what the stores do not offer (documents as
 * stored, written or removed underneath them) and its URI (stores of another process).
 */
export function useRunnerDatabaseWithDriver(prefix: string): { readonly stores: Stores; readonly raw: Db; readonly uri: string } {
  return useDatabase(prefix, true);
}

function useDatabase(prefix: string, driver: boolean): { readonly stores: Stores; readonly raw: Db; readonly uri: string } {
  let database: TestDatabaseUri | null = null;
  let stores: Stores | null = null;
  let client: MongoClient | null = null;
  beforeAll(async () => {
    database = await createTestDatabaseUri(prefix);
    stores = await openMongoStores({ uri: database.uri });
    if (driver) client = await new MongoClient(database.uri).connect();
  });
  afterAll(async () => {
    await client?.close();
    await stores?.close();
    if (database) await dropTestDatabase(database);
    await stopTestServer();
  });
  const opened = <T>(value: T | null): T => {
    if (value === null) throw new Error('the database opens in beforeAll');
    return value;
  };
  return {
    get stores() {
      return opened(stores);
    },
    get raw() {
      return opened(client).db();
    },
    get uri() {
      return opened(database).uri;
    },
  };
}

/** A host double: runs start (on test branches named by run), merges are refused, statuses go nowhere. */
export function quietHost(overrides: Partial<GitHost> = {}): GitHost {
  return {
    readPullRequest: async () => null,
    readBranchHead: async () => 'base0',
    startTestRun: async (request) => ({ ok: true, testBranch: `mq/${request.runId}`, testBranchSha: null }),
    cancelTestRun: async () => undefined,
    merge: async () => ({ ok: false, reason: 'blocked', message: 'unused' }),
    reportPullRequestStatus: async () => undefined,
    ...overrides,
  };
}

/** A host double that reads every PR as open and mergeable, builds every run, and lands as `land` answers (asked in order). */
export function landingHost(land: (request: MergeRequest) => Promise<MergeOutcome>): { host: GitHost; merges: MergeRequest[] } {
  const merges: MergeRequest[] = [];
  const host = quietHost({
    readPullRequest: async (_repo, prNumber) => prFacts(prNumber),
    startTestRun: async (request) => ({ ok: true, testBranch: `mq/${request.runId}`, testBranchSha: `sha-${request.runId}` }),
    merge: async (request) => {
      merges.push(request);
      return land(request);
    },
  });
  return { host, merges };
}

/** A queue of one run at a time (checks `ci`) whose one PR the writer is testing: the queue, the PR's entry, the run. */
export async function oneRunTesting(stores: Stores, writer: QueueRunner, name: string): Promise<{ queueId: string; entryId: string; runId: string }> {
  const queue = await insertQueue(stores, name, { config: { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'], concurrency: 1 } });
  await writer.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  const { entryId, submitted } = await claimEntry(stores, queue.id, 1);
  await writer.dispatch(queue.id, submitted);
  await writer.settled(queue.id);
  const runId = (await writer.engineState(queue.id))?.runs[0]?.id as string;
  return { queueId: queue.id, entryId, runId };
}

/** An open, mergeable PR on main. */
export const prFacts = (n: number): PullRequestFacts => ({
  title: `PR ${n}`,
  author: 'a',
  headSha: `head${n}`,
  baseBranch: 'main',
  open: true,
  draft: false,
  merged: false,
  mergeability: 'mergeable',
  readAt: new Date(0),
});

/** A queue on the host double's `fake.example`, requiring the check `ci`. */
export async function insertQueue(stores: Stores, name: string, change: Partial<Pick<QueueRecord, 'config' | 'requestedState'>> & { at?: Date } = {}): Promise<QueueRecord> {
  const at = change.at ?? new Date(0);
  const inserted = await stores.queues.insert({
    repo: { host: 'fake.example', owner: 'acme', name },
    targetBranch: 'main',
    config: change.config ?? { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'] },
    requestedState: change.requestedState ?? 'RUNNING',
    modeSwitchStartedAt: null,
    createdAt: at,
    updatedAt: at,
  });
  if (!inserted.ok) throw new Error(`queue ${name} exists`);
  return inserted.value;
}

/** A new entry's first record as a submit makes it (NOT_READY, submitted at `at`). */
export function submission(queueId: string, prNumber: number, at: Date, facts: PullRequestFacts | null): Omit<QueueEntryRecord, 'id'> {
  return {
    queueId,
    prNumber,
    attempt: 1,
    state: 'NOT_READY',
    priority: 100,
    noBatch: false,
    submittedAt: at,
    stateChangedAt: at,
    concludedAt: null,
    facts,
    timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }],
  };
}

/** A PR's submission as a submit records it (its claim; the runner writes the entry), and the submit input the runner is then given. */
export async function claimEntry(stores: Stores, queueId: string, prNumber: number, options: { facts?: PullRequestFacts | null; at?: Date } = {}) {
  const at = options.at ?? new Date(0);
  const facts = options.facts === undefined ? prFacts(prNumber) : options.facts;
  const entry = await stores.entries.claim(submission(queueId, prNumber, at, facts));
  if (!entry.ok) throw new Error(`PR ${prNumber} has an entry`);
  const submitted = { type: 'submitted' as const, entryId: entry.value.id, prNumber, priority: 100, noBatch: false, facts: engineFacts(facts) };
  return { entryId: entry.value.id, submitted };
}

/** The stores' own mongoose model of a collection on a database (to spy on what they ask of it). */
export function storesModel(databaseName: string, collection: string): Model<unknown> {
  const connection = mongoose.connections.find((c) => c.name === databaseName && Object.values(c.models).some((m) => m.collection.name === collection));
  const model = connection && Object.values(connection.models).find((m) => m.collection.name === collection);
  if (!model) throw new Error(`no model of ${collection} on ${databaseName}`);
  return model as Model<unknown>;
}
