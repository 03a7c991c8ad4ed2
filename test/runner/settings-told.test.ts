/**
 * updateQueue writes the queue record, then tells the engine (config_changed). A process that died in between left
 * the two apart for good (found by review): the next writer to load the queue tells the engine what the record says,
 * and says nothing when they agree (a config change lifts a blocked landing, so a spurious one is not harmless).
 */
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { landingHost, oneRunTesting, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('settings_told');

const { host, merges } = landingHost(async () => ({ ok: false, reason: 'blocked', message: 'Protected branch update failed' }));
const runner = () => new QueueRunner({ stores: db.stores, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner: 'A', pollMs: 60_000 });

async function blockedQueue(name: string) {
  const writer = runner();
  const { queueId, runId } = await oneRunTesting(db.stores, writer, name);
  const queue = (await db.stores.queues.findById(queueId))!;
  await writer.dispatch(queue.id, { type: 'run_finished', runId, passed: true });
  await writer.settled(queue.id);
  expect((await writer.engineState(queue.id))?.landingBlocked).toBeTruthy();
  await writer.stop();
  return queue;
}

test('a pause written to the record but never told to the engine: the next writer tells it', async () => {
  const queue = await blockedQueue('told');
  // The process died between the record's write and the dispatch.
  await db.stores.queues.update(queue.id, { requestedState: 'PAUSED', config: { ...queue.config, concurrency: 2 }, updatedAt: new Date() });

  const next = runner();
  await next.dispatch(queue.id, { type: 'tick' });
  await next.settled(queue.id);
  const state = await next.engineState(queue.id);
  expect([state?.requestedState, state?.config.concurrency]).toEqual(['PAUSED', 2]);
  await next.stop();
});

test('settings that agree: the next writer tells the engine nothing (its landing block stays)', async () => {
  const queue = await blockedQueue('agree');
  const before = merges.length;
  const next = runner();
  await next.dispatch(queue.id, { type: 'tick' });
  await next.settled(queue.id);
  // Not lifted and landed again (a config change would have: the host asked once more, the block begun anew).
  expect(merges).toHaveLength(before);
  expect((await next.engineState(queue.id))?.landingBlocked).toMatchObject({ message: 'Protected branch update failed', tries: 0 });
  await next.stop();
});
