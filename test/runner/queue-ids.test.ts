/**
 * The runner's sweep asks the engine store for every queue with a state, every few seconds on every replica. Grouping
 * the snapshots read each stored state whole on the local FerretDB (megabytes for a long queue); the leases, a few
 * small documents per queue, name the same queues (a state is only ever stored by a lease holder). The snapshots are
 * grouped once per process, for states stored before leases were kept.
 */
import { jest } from '@jest/globals';
import type { EngineState } from '../../src/engine/model.js';
import { storesModel, useRunnerDatabaseWithDriver } from './support/runner-fixture.js';

const db = useRunnerDatabaseWithDriver('queue_ids');

test('queues are found by their leases; the snapshots are grouped once, for a state stored without a lease', async () => {
  const { engine } = db.stores;
  await engine.saveSnapshot('stored-before-leases', { version: 0, state: { marker: 'no lease' } as unknown as EngineState });
  expect(await engine.acquireLease('leased', 'A', 1_000, 30_000)).toBe(1);
  const grouped = jest.spyOn(storesModel(db.raw.databaseName, 'queue_engine_snapshots'), 'aggregate');
  try {
    expect((await engine.queueIds()).sort()).toEqual(['leased', 'stored-before-leases']);
    // The first sweep loaded it, taking its lease: from then on the leases name it too.
    expect(await engine.acquireLease('stored-before-leases', 'A', 1_000, 30_000)).toBe(1);
    expect(await engine.acquireLease('another', 'B', 1_000, 30_000)).toBe(1);
    expect((await engine.queueIds()).sort()).toEqual(['another', 'leased', 'stored-before-leases']);
    expect(grouped).toHaveBeenCalledTimes(1);
  } finally {
    grouped.mockRestore();
  }
});
