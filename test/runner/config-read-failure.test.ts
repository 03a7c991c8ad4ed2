/**
 * A decision that changes the queue's settings reads the queue record first (it decides with the settings the record
 * holds). If that read fails, the round's inputs must leave no trace in the state (they wait in the inbox, and are
 * decided there as new), or the engine holds a PR the log and the entries never heard of.
 */
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { loadState } from '../../src/runner/decide-inputs.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('config_read');

test('a failed queue-record read for a settings change leaves the round undecided, and its inputs are decided as new', async () => {
  const queue = await insertQueue(db.stores, 'config-read');
  const queues = { ...db.stores.queues };
  let failReads = 0;
  queues.findById = async (id) => {
    if (failReads > 0) {
      failReads--;
      throw new Error('connection reset while reading the queue');
    }
    return db.stores.queues.findById(id);
  };
  const runner = new QueueRunner({ stores: { ...db.stores, queues }, hosts: gitHostRegistry({ 'fake.example': quietHost() }), log: silentLog, owner: 'A', pollMs: 60_000 });
  await runner.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  await runner.settled(queue.id);
  const { entryId, submitted } = await claimEntry(db.stores, queue.id, 7);
  failReads = 1;
  const answers = await Promise.allSettled([
    runner.dispatch(queue.id, { type: 'config_changed', config: { ...queue.config, concurrency: 2 }, requestedState: queue.requestedState }),
    runner.dispatch(queue.id, submitted),
  ]);
  expect(failReads).toBe(0);
  // Answered as inputs the next round decides (not decided here, not failed).
  expect(answers).toEqual([
    { status: 'fulfilled', value: false },
    { status: 'fulfilled', value: false },
  ]);
  // The inbox's inputs, decided as new, each once: the PR's entry written.
  await runner.settled(queue.id);
  const held = await runner.engineState(queue.id);
  expect(held?.entries.map((e) => e.id)).toEqual([entryId]);
  // What the runner holds is what the log says (the failed round left nothing of its own).
  const stored = await db.stores.engine.load(queue.id);
  const logged = stored ? loadState(stored.snapshot, stored.decisions) : null;
  expect(logged).toEqual(held);
  const log = await db.stores.engine.decisionsAfter(queue.id, 0, 1000);
  for (const type of ['submitted', 'config_changed']) expect(log.filter((d) => d.items.some((item) => item.input.type === type))).toHaveLength(1);
  expect((await db.stores.entries.findById(entryId))?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  await runner.stop();
});
