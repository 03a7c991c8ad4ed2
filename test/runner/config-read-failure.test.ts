/**
 * A decision that changes the queue's settings reads the queue record first (it decides with the settings the record
 * holds). If that read fails, the round's inputs must leave no trace in the state (they are answered as failed, and a
 * retry must be decided as new), or the engine holds a PR the log and the entries never heard of.
 */
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { loadState } from '../../src/runner/decide-inputs.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('config_read');

test('a failed queue-record read for a settings change leaves the round undecided, and a retry is decided as new', async () => {
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
  expect(answers.map((a) => a.status)).toContain('rejected');
  // What the runner holds is what the log says.
  const stored = await db.stores.engine.load(queue.id);
  const logged = stored ? loadState(stored.snapshot, stored.decisions) : null;
  const held = await runner.engineState(queue.id);
  expect(held?.entries.map((e) => e.id)).toEqual(logged?.entries.map((e) => e.id));
  // The client retries the submit it was told failed: decided as a new PR, its entry written.
  await runner.dispatch(queue.id, submitted);
  await runner.settled(queue.id);
  expect((await runner.engineState(queue.id))?.entries.map((e) => e.id)).toContain(entryId);
  expect((await db.stores.entries.findById(entryId))?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  await runner.stop();
});
