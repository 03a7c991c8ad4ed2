/**
 * A re-submit reads the PR's facts (from a host that answers locally) and the
 * runner, the entry's one writer, records them in a decision of its own: the
 * handler writes nothing to an existing entry (a write there raced the record step).
 */
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import type { PullRequestFacts } from '../../src/domain/records.js';
import { gitHostRegistry, type GitHost } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { pullRequestService } from '../../src/queue/pull-request-service.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';

const silent = { info() {}, warn() {}, error() {} };

let database: TestDatabaseUri;
let stores: Stores;
beforeAll(async () => {
  database = await createTestDatabaseUri('resubmit_facts');
  stores = await openMongoStores({ uri: database.uri });
});
afterAll(async () => {
  await stores.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

test('the facts a re-submit reads are recorded by the runner, not written by the handler', async () => {
  let head = 'head-a';
  const host: GitHost & { answersLocally: true } = {
    answersLocally: true,
    readPullRequest: async (): Promise<PullRequestFacts> => ({ title: 'PR 1', author: 'dev', headSha: head, baseBranch: 'main', open: true, draft: false, merged: false, mergeability: 'mergeable', readAt: new Date() }),
    readBranchHead: async () => 'base0',
    startTestRun: async (request) => ({ ok: true, testBranch: `mq/${request.runId}`, testBranchSha: null }),
    cancelTestRun: async () => undefined,
    merge: async () => ({ ok: false, reason: 'blocked', message: 'unused' }),
    reportPullRequestStatus: async () => undefined,
  };
  const hosts = gitHostRegistry({ 'local.example': host });
  const at = new Date();
  const queue = await stores.queues.insert({ repo: { host: 'local.example', owner: 'acme', name: 'facts' }, targetBranch: 'main', config: { ...DEFAULT_QUEUE_CONFIG }, requestedState: 'RUNNING', modeSwitchStartedAt: null, createdAt: at, updatedAt: at });
  if (!queue.ok) throw new Error('queue exists');
  let handlerWrites = 0;
  const runner = new QueueRunner({ stores, hosts, log: silent, owner: 'A', pollMs: 60_000 });
  // The use cases' stores count entry writes of their own (the runner has the real ones).
  const counted: Stores = { ...stores, entries: { ...stores.entries, setFacts: async (...args) => void (handlerWrites++, await stores.entries.setFacts(...args)) } };
  const service = pullRequestService(counted, hosts, runner, silent);
  const ref = { repo: queue.value.repo, targetBranch: 'main', prNumber: 1 };
  expect((await service.submit(ref)).ok).toBe(true);
  head = 'head-b';
  const again = await service.submit({ ...ref, priority: 10 });
  expect(again.ok && again.value.entry.facts?.headSha).toBe('head-b');
  expect(handlerWrites).toBe(0);
  const logged = await stores.engine.decisionsAfter(queue.value.id, 0, 100);
  expect(logged.some((d) => d.items.some((item) => item.input.type === 'pr_facts_read' && item.input.facts.headSha === 'head-b'))).toBe(true);
  expect((await stores.entries.find(queue.value.id, 1))?.facts?.headSha).toBe('head-b');
  await runner.stop();
});
