/**
 * A snapshot writes the whole engine state (about 1.4 MB at 5,000 PRs): it is written off the decision round, so
 * a slow one holds up no submit, and a state loaded while it is written (or after) is the state decided.
 */
import { gitHostRegistry } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { loadState } from '../../src/runner/decide-inputs.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('background_snapshot');

test('decisions go on while a snapshot is written, and the state loaded then or after is the one decided', async () => {
  const { stores } = db;
  const queue = await insertQueue(stores, 'snapshots');
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const snapshotsAsked: number[] = [];
  const gated: Stores = {
    ...stores,
    engine: {
      ...stores.engine,
      saveSnapshot(queueId, snapshot) {
        snapshotsAsked.push(snapshot.version);
        if (snapshot.version === 0) return stores.engine.saveSnapshot(queueId, snapshot);
        // As the store does: the state is read now (the port's promise), the write held.
        const state = JSON.parse(JSON.stringify(snapshot.state)) as typeof snapshot.state;
        return held.then(() => stores.engine.saveSnapshot(queueId, { version: snapshot.version, state }));
      },
    },
  };
  const runner = new QueueRunner({ stores: gated, hosts: gitHostRegistry({ 'fake.example': quietHost() }), log: silentLog, owner: 'A', pollMs: 60_000, snapshotEvery: 2 });
  await runner.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  await runner.settled(queue.id);
  // Enough decisions for a snapshot to be due, and more after it: none waits for the held write.
  const entries: string[] = [];
  for (let pr = 1; pr <= 6; pr++) {
    const { entryId, submitted } = await claimEntry(stores, queue.id, pr);
    entries.push(entryId);
    expect(await runner.dispatch(queue.id, submitted)).toBe(true);
  }
  expect(snapshotsAsked.filter((v) => v > 0)).toHaveLength(1); // One write at a time: the later ones were not started.
  const heldVersion = snapshotsAsked.at(-1) as number;
  const whileHeld = await stores.engine.load(queue.id);
  expect(whileHeld?.snapshot.version).toBe(0);
  release();
  await runner.settled(queue.id);
  await runner.stop(); // Waits for the write.
  const after = await stores.engine.load(queue.id);
  expect(after?.snapshot.version).toBe(heldVersion);
  // Copied as of its version: the decisions made while it was written are not in it.
  expect(after?.snapshot.state.entries.length).toBeLessThan(6);
  // Snapshot plus the log after it: every submitted PR, in line.
  const loaded = loadState(after!.snapshot, after!.decisions);
  expect(loaded.entries.map((e) => e.id).sort()).toEqual([...entries].sort());
  expect(after!.decisions[0]?.version).toBe(heldVersion + 1);
});

test('a load after a compaction starts at the snapshot kept and stands for the same state', async () => {
  const { stores } = db;
  const queue = await insertQueue(stores, 'compacted');
  const runner = new QueueRunner({ stores, hosts: gitHostRegistry({ 'fake.example': quietHost() }), log: silentLog, owner: 'A', pollMs: 60_000 });
  await runner.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  for (let pr = 1; pr <= 3; pr++) expect(await runner.dispatch(queue.id, (await claimEntry(stores, queue.id, pr)).submitted)).toBe(true);
  await runner.settled(queue.id);
  await runner.stop();
  const whole = await stores.engine.load(queue.id);
  expect(whole!.snapshot.version).toBe(0);
  // A snapshot part-way, and the log compacted up to it: the load starts there.
  const middle = whole!.decisions[1]!.version;
  await stores.engine.saveSnapshot(queue.id, { version: middle, state: loadState(whole!.snapshot, whole!.decisions.filter((d) => d.version <= middle)) });
  await stores.engine.compact(queue.id, middle);
  const compacted = await stores.engine.load(queue.id);
  expect(compacted!.snapshot.version).toBe(middle);
  expect(compacted!.decisions.map((d) => d.version)).toEqual(whole!.decisions.filter((d) => d.version > middle).map((d) => d.version));
  expect(loadState(compacted!.snapshot, compacted!.decisions).entries).toEqual(loadState(whole!.snapshot, whole!.decisions).entries);
});

test('a snapshot is serialized when it is asked for: the state may change while it is written', async () => {
  const { stores } = db;
  const queue = await insertQueue(stores, 'serialized');
  const runner = new QueueRunner({ stores, hosts: gitHostRegistry({ 'fake.example': quietHost() }), log: silentLog, owner: 'A', pollMs: 60_000 });
  await runner.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  expect(await runner.dispatch(queue.id, (await claimEntry(stores, queue.id, 1)).submitted)).toBe(true);
  await runner.stop();
  const stored = await stores.engine.load(queue.id);
  const state = loadState(stored!.snapshot, stored!.decisions);
  const version = stored!.decisions.at(-1)!.version;
  const writing = stores.engine.saveSnapshot(queue.id, { version, state });
  state.entries.length = 0; // What the next round would do to it, in place.
  await writing;
  expect((await stores.engine.load(queue.id))!.snapshot.state.entries.map((e) => e.prNumber)).toEqual([1]);
});
