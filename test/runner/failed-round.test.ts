/**
 * A decision round that fails (the database refused a read or a write) is not a failed request. An input handed to
 * the writer that the round had not stored waits in the inbox, and the request is answered as one another replica
 * decides; one it stored is decided, and recorded by the next round. Only a store of the decision that may or may not
 * have written it fails the request: put in the inbox too, the input could be decided twice.
 */
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('failed_round');
const host = quietHost();

/** The stores, with switches that make the inbox's read, the decision's store or the entries' record fail. */
function failingStores() {
  const fail = { pending: false, append: false, record: 0 };
  const engine: Stores['engine'] = {
    ...db.stores.engine,
    async pending(...args) {
      if (fail.pending) throw new Error('connection reset reading the inbox');
      return db.stores.engine.pending(...args);
    },
    async append(...args) {
      if (fail.append) throw new Error('connection reset storing the decision');
      return db.stores.engine.append(...args);
    },
  };
  const entries: Stores['entries'] = {
    ...db.stores.entries,
    async recordTransitions(...args) {
      if (fail.record > 0) {
        fail.record--;
        throw new Error('connection reset recording the decision');
      }
      return db.stores.entries.recordTransitions(...args);
    },
  };
  return { stores: { ...db.stores, engine, entries }, fail };
}

let counter = 0;
/** A queue whose writer is runner A (it decided the branch's head), and a claimed submission of PR 1. */
async function writerWithSubmission() {
  const queue = await insertQueue(db.stores, `failed-round${++counter}`, { config: { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'], concurrency: 2 } });
  const { stores, fail } = failingStores();
  const a = new QueueRunner({ stores, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner: 'A', pollMs: 60_000 });
  await a.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  await a.settled(queue.id);
  const { entryId, submitted } = await claimEntry(db.stores, queue.id, 1);
  return { queue, a, fail, entryId, submitted };
}

/** How many stored decisions took in this PR's submission. */
async function decisionsOfSubmission(queueId: string, entryId: string): Promise<number> {
  const log = await db.stores.engine.decisionsAfter(queueId, 0, 1000);
  return log.filter((d) => d.items.some((item) => item.input.type === 'submitted' && item.input.entryId === entryId)).length;
}

test('a round that fails before storing its decision leaves a handed input to the inbox: answered, then decided once', async () => {
  const { queue, a, fail, entryId, submitted } = await writerWithSubmission();
  fail.pending = true;
  // A kick marks the inbox as maybe holding inputs: the round that takes the handed submission reads it, and fails
  // (the kick's own round, or the one after it, which the failed one marks again).
  a.kick(queue.id);
  await expect(a.dispatch(queue.id, submitted)).resolves.toBe(false);
  expect((await db.stores.engine.pending(queue.id, 10)).map((item) => item.input)).toEqual([submitted]);
  expect(await decisionsOfSubmission(queue.id, entryId)).toBe(0);

  fail.pending = false;
  await a.settled(queue.id);
  expect((await db.stores.entries.findById(entryId))?.state).toBe('TESTING');
  expect(await decisionsOfSubmission(queue.id, entryId)).toBe(1);
  expect(await db.stores.engine.pending(queue.id, 10)).toEqual([]);
  await a.stop();
});

test('a round that fails after storing its decision answers the handed input as decided; the next round records it, once', async () => {
  const { queue, a, fail, entryId, submitted } = await writerWithSubmission();
  fail.record = 1;
  await expect(a.dispatch(queue.id, submitted)).resolves.toBe(false);
  expect(await db.stores.engine.pending(queue.id, 10)).toEqual([]);
  expect(await decisionsOfSubmission(queue.id, entryId)).toBe(1);

  await a.settled(queue.id);
  const entry = await db.stores.entries.findById(entryId);
  expect(entry?.timeline.map((t) => t.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  expect(await decisionsOfSubmission(queue.id, entryId)).toBe(1);
  await a.stop();
});

test('a store of the decision that failed (written or not, nobody can tell) fails the request, and nothing waits in the inbox', async () => {
  const { queue, a, fail, entryId, submitted } = await writerWithSubmission();
  fail.append = true;
  await expect(a.dispatch(queue.id, submitted)).rejects.toThrow('connection reset storing the decision');
  expect(await db.stores.engine.pending(queue.id, 10)).toEqual([]);
  expect(await db.stores.entries.findById(entryId)).toBeNull();
  fail.append = false;
  await a.stop();
});

test('an input sent through the inbox is answered when the round fails: it waits there, and the next round decides it', async () => {
  const queue = await insertQueue(db.stores, `failed-round${++counter}`, { config: { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'], concurrency: 2 } });
  const { entryId, submitted } = await claimEntry(db.stores, queue.id, 1);
  const { stores, fail } = failingStores();
  // B is not the writer yet: its input goes to the inbox, and the round that would take the lease fails reading it.
  const b = new QueueRunner({ stores, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner: 'B', pollMs: 60_000 });
  fail.pending = true;
  await expect(b.dispatch(queue.id, submitted)).resolves.toBe(false);
  expect((await db.stores.engine.pending(queue.id, 10)).map((item) => item.input)).toContainEqual(submitted);

  fail.pending = false;
  await b.settled(queue.id);
  expect((await db.stores.entries.findById(entryId))?.state).toBe('TESTING');
  expect(await decisionsOfSubmission(queue.id, entryId)).toBe(1);
  await b.stop();
});
