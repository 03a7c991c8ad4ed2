/**
 * The forecast's CI history is read again once a finished run is recorded; a
 * read that was under way meanwhile (it may miss that run) answers its caller
 * but is not kept, or the forecast would rest on it for a minute. (The dashboard
 * once showed one finished run of two for that minute.)
 */
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import type { PullRequestFacts, TestRunRecord } from '../../src/domain/records.js';
import { gitHostRegistry, type GitHost } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { engineFacts } from '../../src/runner/engine-inputs.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';

const silent = { info() {}, warn() {}, error() {} };

let database: TestDatabaseUri;
let stores: Stores;
beforeAll(async () => {
  database = await createTestDatabaseUri('forecast_history');
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
  startTestRun: async (request) => ({ ok: true, testBranch: `mq/${request.runId}`, testBranchSha: `sha-${request.runId}` }),
  cancelTestRun: async () => undefined,
  merge: async () => ({ ok: false, reason: 'blocked', message: 'unused' }),
  reportPullRequestStatus: async () => undefined,
};

const facts: PullRequestFacts = { title: 'PR 1', author: 'a', headSha: 'head1', baseBranch: 'main', open: true, draft: false, merged: false, mergeability: 'mergeable', readAt: new Date(0) };

test('a history read under way while a finished run is recorded is not kept: the next forecast counts the run', async () => {
  const at = new Date();
  const queue = await stores.queues.insert({
    repo: { host: 'fake.example', owner: 'acme', name: 'forecast' },
    targetBranch: 'main',
    config: { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'] },
    requestedState: 'RUNNING',
    modeSwitchStartedAt: null,
    createdAt: at,
    updatedAt: at,
  });
  if (!queue.ok) throw new Error('queue exists');
  const queueId = queue.value.id;
  const entry = await stores.entries.insert({ queueId, prNumber: 1, attempt: 1, state: 'NOT_READY', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, facts, timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }] });
  if (!entry.ok) throw new Error('entry exists');

  // The first history read waits until released: it began before the run finished.
  let release: (() => void) | null = null;
  let gate = false;
  const testRuns = {
    ...stores.testRuns,
    async listFinishedSince(id: string, since: Date): Promise<TestRunRecord[]> {
      const found = await stores.testRuns.listFinishedSince(id, since);
      if (gate) {
        gate = false;
        await new Promise<void>((resolve) => (release = resolve));
      }
      return found;
    },
  };
  const clock = { now: Date.now() };
  const runner = new QueueRunner({ stores: { ...stores, testRuns }, hosts: gitHostRegistry({ 'fake.example': host }), log: silent, owner: 'A', pollMs: 60_000, now: () => clock.now });
  await runner.dispatch(queueId, { type: 'base_moved', sha: 'base0' });
  await runner.dispatch(queueId, { type: 'submitted', entryId: entry.value.id, prNumber: 1, priority: 100, noBatch: false, facts: engineFacts(facts) });
  await runner.settled(queueId);
  const [run] = (await runner.engineState(queueId))?.runs ?? [];
  const record = run ? await stores.testRuns.findByEngineRunId(queueId, run.id) : null;
  if (!run || !record) throw new Error('no run started');

  // What the host-action loop read of the history has aged out: the next forecast reads it again.
  clock.now += 61_000;
  gate = true;
  const before = runner.mergeForecast(queueId);
  for (let waited = 0; !release; waited += 5) {
    if (waited > 5_000) throw new Error('the forecast did not read the history');
    await new Promise((r) => setTimeout(r, 5));
  }
  await runner.dispatch(queueId, { type: 'test_run_reported', testRunId: record.id, engineRunId: run.id, passed: true, checkRuns: [], failedChecks: [] });
  (release as () => void)();
  expect((await before).samples).toBe(0); // What that read found, for its own caller.
  expect((await runner.mergeForecast(queueId)).samples).toBe(1);
  await runner.stop();
});
