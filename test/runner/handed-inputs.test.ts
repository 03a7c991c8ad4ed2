/**
 * A request's input given to the replica that is its queue's writer skips the
 * inbox: it goes into the writer's next decision, whose log entry is its only
 * durable record. Nothing is written to the inbox for it, concurrent requests
 * share decisions, and another runner loading the queue from the database
 * holds what was decided.
 */
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import type { PullRequestFacts } from '../../src/domain/records.js';
import { gitHostRegistry, type GitHost } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { engineFacts } from '../../src/runner/engine-inputs.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';

const silent = { info() {}, warn() {}, error() {} };

let database: TestDatabaseUri;
let stores: Stores;
beforeAll(async () => {
  database = await createTestDatabaseUri('handed');
  stores = await openMongoStores({ uri: database.uri });
});
afterAll(async () => {
  await stores.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

const host: GitHost = {
  readPullRequest: async () => null,
  readBranchHead: async () => 'base0',
  startTestRun: async (request) => ({ ok: true, testBranch: `mq/${request.runId}`, testBranchSha: null }),
  cancelTestRun: async () => undefined,
  merge: async () => ({ ok: false, reason: 'blocked', message: 'unused' }),
  reportPullRequestStatus: async () => undefined,
};

const facts = (n: number): PullRequestFacts => ({
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

let repoCounter = 0;
async function queueWithEntries(count: number) {
  const at = new Date(0);
  const inserted = await stores.queues.insert({
    repo: { host: 'fake.example', owner: 'acme', name: `handed${++repoCounter}` },
    targetBranch: 'main',
    config: { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'], concurrency: 2 },
    requestedState: 'RUNNING',
    modeSwitchStartedAt: null,
    createdAt: at,
    updatedAt: at,
  });
  if (!inserted.ok) throw new Error('queue exists');
  const queue = inserted.value;
  const submits = [];
  for (let n = 1; n <= count; n++) {
    const entry = await stores.entries.insert({
      queueId: queue.id,
      prNumber: n,
      attempt: 1,
      state: 'NOT_READY',
      priority: 100,
      noBatch: false,
      submittedAt: at,
      stateChangedAt: at,
      concludedAt: null,
      facts: facts(n),
      timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }],
    });
    if (!entry.ok) throw new Error('entry exists');
    submits.push({ type: 'submitted' as const, entryId: entry.value.id, prNumber: n, priority: 100, noBatch: false, facts: engineFacts(facts(n)) });
  }
  return { queue, submits };
}

/** The engine store, counting what goes through the inbox. */
function countingEngine() {
  const counts = { enqueued: 0, read: 0 };
  const engine = {
    ...stores.engine,
    async enqueue(...args: Parameters<Stores['engine']['enqueue']>) {
      counts.enqueued++;
      return stores.engine.enqueue(...args);
    },
    async pending(...args: Parameters<Stores['engine']['pending']>) {
      counts.read++;
      return stores.engine.pending(...args);
    },
  };
  return { engine, counts };
}

function runner(owner: string, engine = stores.engine) {
  return new QueueRunner({ stores: { ...stores, engine }, hosts: gitHostRegistry({ 'fake.example': host }), log: silent, owner, pollMs: 60_000 });
}

test('the writer decides a request without the inbox; the decision is its record, and the next writer holds it', async () => {
  const { queue, submits } = await queueWithEntries(1);
  const { engine, counts } = countingEngine();
  const a = runner('A', engine);
  // The first input makes A the writer (through the inbox: A did not hold the lease yet).
  await a.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  await a.settled(queue.id);
  const before = { ...counts };

  expect(await a.dispatch(queue.id, submits[0]!)).toBe(true);
  expect(counts.enqueued).toBe(before.enqueued);
  expect(counts.read).toBe(before.read);
  expect(await stores.engine.pending(queue.id, 10)).toEqual([]);
  // Answered once recorded: the entry's record says what the engine decided.
  const entry = await stores.entries.findById(submits[0]!.entryId);
  expect(entry?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  const logged = await stores.engine.decisionsAfter(queue.id, 0, 100);
  expect(logged.filter((d) => d.items.some((item) => item.input.type === 'submitted' && item.handed))).toHaveLength(1);
  await a.stop();

  // A replica loading the queue from the database (A released its lease) holds the entry and its run.
  const b = runner('B');
  await b.start();
  const state = await b.engineState(queue.id);
  expect(state?.entries.map((e) => e.id)).toEqual([submits[0]!.entryId]);
  expect(state?.runs).toHaveLength(1);
  await b.stop();
});

test('concurrent requests handed to the writer share a few decisions, none through the inbox', async () => {
  const { queue, submits } = await queueWithEntries(20);
  const { engine, counts } = countingEngine();
  const a = runner('A', engine);
  await a.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  await a.settled(queue.id);
  const enqueuedBefore = counts.enqueued;
  const versionsBefore = (await stores.engine.decisionsAfter(queue.id, 0, 1000)).length;

  const answers = await Promise.all(submits.map((submit) => a.dispatch(queue.id, submit)));
  expect(answers.every((decidedHere) => decidedHere)).toBe(true);
  expect(counts.enqueued).toBe(enqueuedBefore);
  const decisions = (await stores.engine.decisionsAfter(queue.id, 0, 1000)).length - versionsBefore;
  expect(decisions).toBeGreaterThan(0);
  expect(decisions).toBeLessThan(5);
  const state = await a.engineState(queue.id);
  expect(state?.entries).toHaveLength(20);
  await a.settled(queue.id);
  const decided = await a.engineState(queue.id);
  await a.stop();
  // Decided together, and replayed together: a runner loading the log holds the same queue.
  const logged = await stores.engine.decisionsAfter(queue.id, 0, 1000);
  expect(logged.filter((d) => d.items.length > 1).every((d) => d.together)).toBe(true);
  const b = runner('B');
  await b.start();
  expect(await b.engineState(queue.id)).toEqual(decided);
  await b.stop();
});
