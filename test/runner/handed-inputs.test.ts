/**
 * A request's input given to the replica that is its queue's writer skips the
 * inbox: it goes into the writer's next decision, whose log entry is its only
 * durable record. Nothing is written to the inbox for it, concurrent requests
 * share decisions, and another runner loading the queue from the database
 * holds what was decided.
 */
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('handed');
const host = quietHost();

let repoCounter = 0;
async function queueWithEntries(count: number) {
  const queue = await insertQueue(db.stores, `handed${++repoCounter}`, { config: { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'], concurrency: 2 } });
  const submits = [];
  for (let n = 1; n <= count; n++) submits.push((await claimEntry(db.stores, queue.id, n)).submitted);
  return { queue, submits };
}

/** The engine store, counting what goes through the inbox. */
function countingEngine() {
  const counts = { enqueued: 0, read: 0 };
  const engine = {
    ...db.stores.engine,
    async enqueue(...args: Parameters<Stores['engine']['enqueue']>) {
      counts.enqueued++;
      return db.stores.engine.enqueue(...args);
    },
    async pending(...args: Parameters<Stores['engine']['pending']>) {
      counts.read++;
      return db.stores.engine.pending(...args);
    },
  };
  return { engine, counts };
}

function runner(owner: string, engine = db.stores.engine) {
  return new QueueRunner({ stores: { ...db.stores, engine }, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner, pollMs: 60_000 });
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
  expect(await db.stores.engine.pending(queue.id, 10)).toEqual([]);
  // Answered once recorded: the entry's record says what the engine decided.
  const entry = await db.stores.entries.findById(submits[0]!.entryId);
  expect(entry?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  const logged = await db.stores.engine.decisionsAfter(queue.id, 0, 100);
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
  const versionsBefore = (await db.stores.engine.decisionsAfter(queue.id, 0, 1000)).length;

  const answers = await Promise.all(submits.map((submit) => a.dispatch(queue.id, submit)));
  expect(answers.every((decidedHere) => decidedHere)).toBe(true);
  expect(counts.enqueued).toBe(enqueuedBefore);
  const decisions = (await db.stores.engine.decisionsAfter(queue.id, 0, 1000)).length - versionsBefore;
  expect(decisions).toBeGreaterThan(0);
  expect(decisions).toBeLessThan(5);
  const state = await a.engineState(queue.id);
  expect(state?.entries).toHaveLength(20);
  await a.settled(queue.id);
  const decided = await a.engineState(queue.id);
  await a.stop();
  // Decided together, and replayed together: a runner loading the log holds the same queue.
  const logged = await db.stores.engine.decisionsAfter(queue.id, 0, 1000);
  expect(logged.filter((d) => d.items.length > 1).every((d) => d.together)).toBe(true);
  const b = runner('B');
  await b.start();
  expect(await b.engineState(queue.id)).toEqual(decided);
  await b.stop();
});
