/**
 * A load is the newest snapshot plus every decision after it. Were decisions right after the snapshot missing
 * (a compaction that ran between the load's two reads leaves it a log that starts later), replaying the rest
 * would give a wrong state: the load reads again, and when the hole stays it fails and names it. A compaction that
 * overtakes a load between its two reads may leave it an empty log: the snapshot read is gone, and the load reads again.
 */
import { jest } from '@jest/globals';
import type { EngineState } from '../../src/engine/model.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, storesModel, useRunnerDatabaseWithDriver } from './support/runner-fixture.js';

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
  await expect(db.stores.engine.load(queue.id)).rejects.toThrow(`the log of queue ${queue.id} has no version 1 after its newest snapshot's 0`);
});

test('a load that a compaction overtakes between its two reads reads again from the newer snapshot', async () => {
  const engine = db.stores.engine;
  const queueId = 'compaction-race';
  await engine.saveSnapshot(queueId, { version: 0, state: { marker: 'snapshot 0' } as unknown as EngineState });
  for (let version = 1; version <= 3; version++) await engine.append({ queueId, version, epoch: 1, items: [], actions: [] });
  // Between the load's read of the newest snapshot (0) and its read of the log after it, another writer stores
  // snapshot 3 and compacts through it: the log after 0 is then empty, as if nothing had been decided since.
  const Decisions = storesModel(db.raw.databaseName, 'queue_engine_decisions');
  const find = Decisions.find.bind(Decisions);
  let overtaken = false;
  const spy = jest.spyOn(Decisions, 'find').mockImplementation(((...args: Parameters<typeof find>) => {
    const query = find(...args);
    if (overtaken) return query;
    overtaken = true;
    const exec = query.exec.bind(query);
    query.exec = (async () => {
      await engine.saveSnapshot(queueId, { version: 3, state: { marker: 'snapshot 3' } as unknown as EngineState });
      await engine.compact(queueId, 3);
      return exec();
    }) as typeof query.exec;
    return query;
  }) as typeof Decisions.find);
  try {
    const loaded = await engine.load(queueId);
    expect(overtaken).toBe(true);
    expect(loaded?.snapshot).toEqual({ version: 3, state: { marker: 'snapshot 3' } });
    expect(loaded?.decisions).toEqual([]);
  } finally {
    spy.mockRestore();
  }
});

