/**
 * The engine's state changes in place while a decision is made, before it is
 * stored and recorded: readers of it (the dashboard's board and forecast) wait
 * for the record, so they never show runs or entries of a decision whose
 * entries are not written yet (or that is then dropped).
 */
import { gitHostRegistry } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('recorded_state');

test('the engine state and forecast are read as of the last recorded decision, not the one being recorded', async () => {
  const { stores } = db;
  const queue = await insertQueue(stores, 'recorded');
  let release: () => void = () => undefined;
  let held = false;
  const gated: Stores = {
    ...stores,
    entries: {
      ...stores.entries,
      async recordTransitions(...args) {
        if (held) await new Promise<void>((resolve) => (release = resolve));
        return stores.entries.recordTransitions(...args);
      },
    },
  };
  const runner = new QueueRunner({ stores: gated, hosts: gitHostRegistry({ 'fake.example': quietHost() }), log: silentLog, owner: 'A', pollMs: 60_000 });
  await runner.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  await runner.settled(queue.id);
  const { entryId, submitted } = await claimEntry(stores, queue.id, 1);
  held = true;
  const decided = runner.dispatch(queue.id, submitted);
  await new Promise((resolve) => setTimeout(resolve, 100)); // Decided, and its record held.
  const reads: string[] = [];
  const state = runner.engineState(queue.id).then((s) => (reads.push('state'), s));
  const forecast = runner.mergeForecast(queue.id).then((f) => (reads.push('forecast'), f));
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(reads).toEqual([]);
  expect(await stores.entries.findById(entryId)).toBeNull();
  held = false;
  release();
  expect(await decided).toBe(true);
  // Once recorded: the entry is in both, and written.
  expect((await state)?.entries.map((e) => e.id)).toEqual([entryId]);
  expect((await forecast).byEntry.has(entryId)).toBe(true);
  expect((await stores.entries.findById(entryId))?.state).not.toBe('NOT_READY');
  await runner.stop();
});
