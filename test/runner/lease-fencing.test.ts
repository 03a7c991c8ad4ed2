/**
 * Two runners, one database: a writer whose lease ran out while it was deciding
 * can neither persist its decision nor act on it; one whose decision lost the
 * compare-and-set (the next writer appended that version first) does neither
 * either. Each runner has its own host double, so what each did is visible.
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
const TTL = 30_000;

let database: TestDatabaseUri;
let stores: Stores;
beforeAll(async () => {
  database = await createTestDatabaseUri('lease');
  stores = await openMongoStores({ uri: database.uri });
});
afterAll(async () => {
  await stores.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

/** A host double that records the test runs it was asked to start, per queue. */
function recordingHost(): GitHost & { started: string[]; startedFor(queueId: string): string[] } {
  const started: string[] = [];
  const queues: string[] = [];
  return {
    started,
    startedFor: (queueId) => started.filter((_, i) => queues[i] === queueId),
    readPullRequest: async () => null,
    readBranchHead: async () => 'base0',
    async startTestRun(request) {
      started.push(request.runId);
      queues.push(request.queueId);
      return { ok: true, testBranch: `mq/${request.runId}`, testBranchSha: null };
    },
    cancelTestRun: async () => undefined,
    merge: async () => ({ ok: false, reason: 'blocked', message: 'unused' }),
    reportPullRequestStatus: async () => undefined,
  };
}

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
/** A queue whose base is known, and an entry for PR 1 ready to be submitted. */
async function queueWithEntry() {
  const at = new Date(0);
  const inserted = await stores.queues.insert({
    repo: { host: 'fake.example', owner: 'acme', name: `lease${++repoCounter}` },
    targetBranch: 'main',
    config: { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'] },
    requestedState: 'RUNNING',
    modeSwitchStartedAt: null,
    createdAt: at,
    updatedAt: at,
  });
  if (!inserted.ok) throw new Error('queue exists');
  const queue = inserted.value;
  const entry = await stores.entries.insert({
    queueId: queue.id,
    prNumber: 1,
    attempt: 1,
    state: 'NOT_READY',
    priority: 100,
    noBatch: false,
    submittedAt: at,
    stateChangedAt: at,
    concludedAt: null,
    facts: facts(1),
    timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }],
  });
  if (!entry.ok) throw new Error('entry exists');
  const submitted = { type: 'submitted' as const, entryId: entry.value.id, prNumber: 1, priority: 100, noBatch: false, facts: engineFacts(facts(1)) };
  return { queue, entryId: entry.value.id, submitted };
}

function runner(owner: string, host: GitHost, clock: { now: number }, engine = stores.engine) {
  return new QueueRunner({
    stores: { ...stores, engine },
    hosts: gitHostRegistry({ 'fake.example': host }),
    log: silent,
    owner,
    now: () => clock.now,
    leaseTtlMs: TTL,
    pollMs: 60_000,
  });
}

const settle = () => new Promise((r) => setTimeout(r, 300));

test('a writer whose lease expires mid-decision neither persists nor acts; the next writer does both, once', async () => {
  const { queue, entryId, submitted } = await queueWithEntry();
  const clock = { now: 1_000_000 };
  const hostA = recordingHost();
  const hostB = recordingHost();
  // A learns the base first (so it holds the lease), then stalls for longer than its lease between reading the inbox and deciding.
  let stall = false;
  const stallingEngine = {
    ...stores.engine,
    async pending(queueId: string, limit: number) {
      const items = await stores.engine.pending(queueId, limit);
      if (stall && items.length > 0) clock.now += TTL + 5_000;
      return items;
    },
  };
  const a = runner('A', hostA, clock, stallingEngine);
  const b = runner('B', hostB, clock);
  await a.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  const versionsBefore = (await stores.engine.decisionsAfter(queue.id, 0, 100)).length;

  // Through the inbox (as from another replica): A reads it, and stalls there.
  stall = true;
  await a.record(queue.id, submitted);
  await settle();
  stall = false;
  expect(hostA.started).toEqual([]);
  expect((await stores.engine.decisionsAfter(queue.id, 0, 100)).length).toBe(versionsBefore);
  expect((await stores.entries.findById(entryId))?.state).toBe('NOT_READY');

  // The lease A held has run out: B takes over, decides the submit and starts its run.
  await b.start();
  await settle();
  expect(hostB.started).toHaveLength(1);
  expect(hostA.started).toEqual([]);
  const entry = await stores.entries.findById(entryId);
  expect(entry?.state).toBe('TESTING');
  expect(entry?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  await a.stop();
  await b.stop();
});

test('a writer that loses the compare-and-set (another appended its version) records and does nothing', async () => {
  const { queue, entryId, submitted } = await queueWithEntry();
  // A's clock is behind: its lease looks valid to A after B (clock ahead) took it over.
  const clockA = { now: 2_000_000 };
  const clockB = { now: 2_000_000 };
  const hostA = recordingHost();
  const hostB = recordingHost();
  const b = runner('B', hostB, clockB);
  let raced = false;
  const racingEngine = {
    ...stores.engine,
    async append(decision: Parameters<Stores['engine']['append']>[0]) {
      if (!raced && decision.items.some((item) => item.input.type === 'submitted')) {
        raced = true;
        // Just before A appends, B (whose clock says A's lease is over) decides the same inbox.
        clockB.now += TTL + 5_000;
        await b.start();
      }
      return stores.engine.append(decision);
    },
  };
  const a = runner('A', hostA, clockA, racingEngine);
  await a.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  // Handed to A, the writer: its decision is refused, so A leaves the submit to the inbox for B.
  expect(await a.dispatch(queue.id, submitted)).toBe(false);
  await b.settled(queue.id);
  expect(raced).toBe(true);
  expect(hostA.started).toEqual([]);
  expect(hostB.startedFor(queue.id)).toHaveLength(1);
  const decisions = await stores.engine.decisionsAfter(queue.id, 0, 100);
  const submits = decisions.filter((d) => d.items.some((item) => item.input.type === 'submitted'));
  expect(submits).toHaveLength(1);
  const entry = await stores.entries.findById(entryId);
  expect(entry?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  await a.stop();
  await b.stop();
});

test('a writer that dies between storing a decision and taking its inputs off the inbox: the next writer applies them once', async () => {
  const { queue, entryId, submitted } = await queueWithEntry();
  const clock = { now: 3_000_000 };
  const hostA = recordingHost();
  const hostB = recordingHost();
  let dying = false;
  const dyingEngine = {
    ...stores.engine,
    async acknowledge(ids: string[]) {
      if (dying) throw new Error('the process died here');
      return stores.engine.acknowledge(ids);
    },
  };
  const a = runner('A', hostA, clock, dyingEngine);
  await a.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  // Idle first: a host-action loop still running from that decision would pick the next one up from the log.
  await a.settled(queue.id);
  dying = true;
  // Through the inbox (as from another replica): A decides it and dies before acknowledging it.
  await a.record(queue.id, submitted);
  await settle();
  await a.stop();
  // The decision is stored; its input is still in the inbox.
  expect((await stores.engine.pending(queue.id, 10)).map((item) => item.input.type)).toContain('submitted');

  clock.now += TTL + 5_000;
  const b = runner('B', hostB, clock);
  await b.settled(queue.id);
  expect(await stores.engine.pending(queue.id, 10)).toEqual([]);
  const entry = await stores.entries.findById(entryId);
  expect(entry?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  const state = await b.engineState(queue.id);
  expect(state?.entries.filter((e) => e.id === entryId)).toHaveLength(1);
  expect(state?.runs).toHaveLength(1);
  expect(hostA.startedFor(queue.id)).toEqual([]);
  expect(hostB.startedFor(queue.id)).toHaveLength(1);
  await b.stop();
});
