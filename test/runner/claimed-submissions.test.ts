/**
 * A submit writes only its claim on the PR (the key holding the entry's first
 * record); the runner, the entry's one writer, writes the entry in the decision
 * that takes it in. A claim whose decision never came (its writer died between
 * the two) is taken in by the next submit of the PR, or ended by a cancel.
 */
import { gitHostRegistry } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { pullRequestService } from '../../src/queue/pull-request-service.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, prFacts, quietHost, silentLog as silent, useRunnerDatabaseWithDriver } from './support/runner-fixture.js';

const db = useRunnerDatabaseWithDriver('claimed_submissions');

function serviceOn(name: string) {
  const { stores } = db;
  const host = { ...quietHost({ readPullRequest: async (_repo, n) => ({ ...prFacts(n), readAt: new Date() }) }), answersLocally: true as const };
  const hosts = gitHostRegistry({ 'fake.example': host });
  const runner = new QueueRunner({ stores, hosts, log: silent, owner: `runner-${name}`, pollMs: 60_000 });
  // What the use cases write to entries themselves, apart from the runner's writes.
  const handlerWrites: string[] = [];
  const entries = stores.entries;
  const counted: Stores = {
    ...stores,
    entries: {
      ...entries,
      claim: (...args) => (handlerWrites.push('claim'), entries.claim(...args)),
      insert: (...args) => (handlerWrites.push('insert'), entries.insert(...args)),
      recordTransitions: (...args) => (handlerWrites.push('recordTransitions'), entries.recordTransitions(...args)),
      setFacts: (...args) => (handlerWrites.push('setFacts'), entries.setFacts(...args)),
    },
  };
  return { runner, service: pullRequestService(counted, hosts, runner, silent), handlerWrites };
}

test('a submit writes its claim and nothing else; the runner writes the entry, decided, before the submit is answered', async () => {
  const queue = await insertQueue(db.stores, 'claims', { requestedState: 'PAUSED' });
  const { runner, service, handlerWrites } = serviceOn('claims');
  const answer = await service.submit({ repo: queue.repo, targetBranch: 'main', prNumber: 1 });
  if (!answer.ok) throw new Error(answer.failure.message);
  expect(handlerWrites).toEqual(['claim']);
  const stored = await db.stores.entries.findById(answer.value.entry.id);
  expect(stored?.state).toBe('PENDING');
  expect(stored?.timeline.map((e) => [e.state, e.reason])).toEqual([
    ['NOT_READY', 'submitted'],
    ['PENDING', 'ready'],
  ]);
  expect(answer.value.entry).toEqual(stored);
  await runner.stop();
});

test('a claim whose decision never came is taken in by the next submit of the PR; another is ended by a cancel', async () => {
  const queue = await insertQueue(db.stores, 'lost', { requestedState: 'PAUSED' });
  // Two submits whose writer died after claiming: no decision names them, no entry is written.
  const lost = await claimEntry(db.stores, queue.id, 1);
  const cancelled = await claimEntry(db.stores, queue.id, 2);
  expect(await db.stores.entries.findById(lost.entryId)).toBeNull();
  const { runner, service } = serviceOn('lost');
  const again = await service.submit({ repo: queue.repo, targetBranch: 'main', prNumber: 1, priority: 50 });
  if (!again.ok) throw new Error(again.failure.message);
  expect(again.value.entry.id).toBe(lost.entryId);
  expect(await db.stores.entries.findById(lost.entryId)).toMatchObject({ state: 'PENDING', priority: 50 });
  const cancel = await service.cancel({ repo: queue.repo, targetBranch: 'main', prNumber: 2 });
  if (!cancel.ok) throw new Error(cancel.failure.message);
  const ended = await db.stores.entries.findById(cancelled.entryId);
  expect(ended?.state).toBe('CANCELLED');
  expect(ended?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'CANCELLED']);
  await runner.stop();
});

test("an upload of a PR's impacted targets racing its submit on the same replica reaches the engine", async () => {
  const { stores } = db;
  const queue = await insertQueue(stores, 'targets-race', { requestedState: 'PAUSED' });
  const host = { ...quietHost({ readPullRequest: async (_repo, n) => ({ ...prFacts(n), readAt: new Date() }) }), answersLocally: true as const };
  const hosts = gitHostRegistry({ 'fake.example': host });
  const runner = new QueueRunner({ stores, hosts, log: silent, owner: 'runner-race', pollMs: 60_000 });
  // The worst interleaving: the submit reads the PR's targets (none yet), the upload then stores them and looks for
  // the PR's entry before the submit's claim is written (the claim waits for that look, or 300 ms).
  const step = (name: string) => {
    let done!: () => void;
    const promise = new Promise<void>((resolve) => (done = resolve));
    return { name, done, reached: promise };
  };
  const submitRead = step('submit read targets');
  const uploadLooked = step('upload looked for the entry');
  const raced: Stores = {
    ...stores,
    impactedTargets: {
      ...stores.impactedTargets,
      async summary(...args) {
        const found = await stores.impactedTargets.summary(...args);
        submitRead.done();
        return found;
      },
      async set(...args) {
        await submitRead.reached;
        return stores.impactedTargets.set(...args);
      },
    },
    entries: {
      ...stores.entries,
      async claim(...args) {
        await Promise.race([uploadLooked.reached, new Promise((resolve) => setTimeout(resolve, 300))]);
        return stores.entries.claim(...args);
      },
      async find(...args) {
        const found = await stores.entries.find(...args);
        uploadLooked.done();
        return found;
      },
    },
  };
  const service = pullRequestService(raced, hosts, runner, silent);
  const ref = { repo: queue.repo, targetBranch: 'main', prNumber: 1 };
  await Promise.all([service.submit(ref), service.setImpactedTargets({ ...ref, sha: 'head1', targets: ['//t1'] })]);
  await runner.settled(queue.id);
  expect((await runner.engineState(queue.id))?.entries.find((e) => e.prNumber === 1)?.targets).toEqual({ sha: 'head1', targets: ['//t1'] });
  await runner.stop();
});

test('a priority no view could show is refused on every way in, and nothing is written', async () => {
  const queue = await insertQueue(db.stores, 'bad-priority', { requestedState: 'PAUSED' });
  const { runner, service, handlerWrites } = serviceOn('bad-priority');
  // What `--priority=constructor` once became through a comment command: Object, a function.
  for (const priority of [Object as unknown as number, 256, -1, 1.5, Number.NaN]) {
    const answer = await service.submit({ repo: queue.repo, targetBranch: 'main', prNumber: 3, priority });
    expect(answer.ok).toBe(false);
    if (!answer.ok) expect(answer.failure.message).toMatch(/priority is an integer from 0 to 255/);
  }
  expect(handlerWrites).toEqual([]);
  await runner.stop();
});

test('an entry stored without a priority (before submits checked it) reads as the default, so no view fails on it', async () => {
  const queue = await insertQueue(db.stores, 'lost-priority', { requestedState: 'PAUSED' });
  const { runner, service } = serviceOn('lost-priority');
  const answer = await service.submit({ repo: queue.repo, targetBranch: 'main', prNumber: 4 });
  if (!answer.ok) throw new Error(answer.failure.message);
  // What `--priority=constructor` once left: BSON dropped the function it was given.
  await db.raw.collection('queue_entries').updateOne({ prNumber: 4 }, { $unset: { priority: '' } });
  expect((await db.raw.collection('queue_entries').findOne({ prNumber: 4 }))?.priority).toBeUndefined();
  expect((await db.stores.entries.findById(answer.value.entry.id))?.priority).toBe(100);
  await runner.stop();
});
