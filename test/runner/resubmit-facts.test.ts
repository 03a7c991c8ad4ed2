/**
 * A re-submit reads the PR's facts (from a host that answers locally) and the
 * runner, the entry's one writer, records them in a decision of its own: the
 * handler writes nothing to an existing entry (a write there raced the record step).
 */
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import type { PullRequestFacts } from '../../src/domain/records.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { pullRequestService } from '../../src/queue/pull-request-service.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { insertQueue, prFacts, quietHost, silentLog as silent, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('resubmit_facts');

test('the facts a re-submit reads are recorded by the runner, not written by the handler', async () => {
  const { stores } = db;
  let head = 'head-a';
  const host = { ...quietHost({ readPullRequest: async (): Promise<PullRequestFacts> => ({ ...prFacts(1), author: 'dev', headSha: head, readAt: new Date() }) }), answersLocally: true as const };
  const hosts = gitHostRegistry({ 'fake.example': host });
  const queue = await insertQueue(stores, 'facts', { config: { ...DEFAULT_QUEUE_CONFIG }, at: new Date() });
  let handlerWrites = 0;
  const runner = new QueueRunner({ stores, hosts, log: silent, owner: 'A', pollMs: 60_000 });
  // The use cases' stores count entry writes of their own (the runner has the real ones).
  const counted: Stores = { ...stores, entries: { ...stores.entries, setFacts: async (...args) => void (handlerWrites++, await stores.entries.setFacts(...args)) } };
  const service = pullRequestService(counted, hosts, runner, silent);
  const ref = { repo: queue.repo, targetBranch: 'main', prNumber: 1 };
  expect((await service.submit(ref)).ok).toBe(true);
  head = 'head-b';
  const again = await service.submit({ ...ref, priority: 10 });
  expect(again.ok && again.value.entry.facts?.headSha).toBe('head-b');
  expect(handlerWrites).toBe(0);
  const logged = await stores.engine.decisionsAfter(queue.id, 0, 100);
  expect(logged.some((d) => d.items.some((item) => item.input.type === 'pr_facts_read' && item.input.facts.headSha === 'head-b'))).toBe(true);
  expect((await stores.entries.find(queue.id, 1))?.facts?.headSha).toBe('head-b');
  await runner.stop();
});
