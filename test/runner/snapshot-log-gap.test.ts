/**
 * A load is the newest snapshot plus every decision after it. Were decisions right after the snapshot missing
 * (a compaction that ran between the load's two reads leaves it a log that starts later), replaying the rest
 * would give a wrong state: the load reads again, and when the hole stays it fails and names it.
 */
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabaseWithDriver } from './support/runner-fixture.js';

const db = useRunnerDatabaseWithDriver('snapshot_gap');

test('a log that does not follow on from its snapshot is not loaded as if it did', async () => {
  const queue = await insertQueue(db.stores, 'gap');
  const runner = new QueueRunner({ stores: db.stores, hosts: gitHostRegistry({ 'fake.example': quietHost() }), log: silentLog, owner: 'A', pollMs: 60_000 });
  await runner.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  for (let pr = 1; pr <= 2; pr++) expect(await runner.dispatch(queue.id, (await claimEntry(db.stores, queue.id, pr)).submitted)).toBe(true);
  await runner.settled(queue.id);
  await runner.stop();
  const whole = await db.stores.engine.load(queue.id);
  expect(whole!.snapshot.version).toBe(0);
  expect(whole!.decisions[0]!.version).toBe(1);
  // The first decision after the snapshot gone, as a compaction would take it for a newer snapshot.
  await db.raw.collection('queue_engine_decisions').deleteOne({ queueId: queue.id, version: 1 });
  await expect(db.stores.engine.load(queue.id)).rejects.toThrow(`the log of queue ${queue.id} starts at version 2, after its newest snapshot's 0`);
});
