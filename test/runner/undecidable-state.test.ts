/**
 * A stored engine state that no input can be applied to (a bug in the state,
 * not in an input) must neither eat the queue's inputs, setting each aside in
 * turn, nor loop (load, tick, fail) as fast as the database answers. The
 * inputs wait in the inbox, each poll tries again, and a state fixed meanwhile
 * (here: a newer snapshot) decides them.
 */
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { waitFor } from '../support/wait-for.js';
import { insertEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('undecidable');
const hosts = gitHostRegistry({ 'fake.example': quietHost() });

test('a stored state that cannot be decided keeps its inputs and is retried per poll, not in a loop; fixed, it decides them', async () => {
  const { stores } = db;
  const queueId = (await insertQueue(stores, 'undecidable', { requestedState: 'PAUSED' })).id;
  const first = new QueueRunner({ stores, hosts, log: silentLog, owner: 'first', pollMs: 60_000 });
  await first.dispatch(queueId, { type: 'base_moved', sha: 'base0' });
  await first.settled(queueId);
  const good = await first.engineState(queueId);
  await first.stop();
  const stored = await stores.engine.load(queueId);
  const latest = stored?.decisions.at(-1)?.version ?? stored?.snapshot.version ?? 0;
  // A state the engine cannot decide on: a bug that a fixed release (below, a newer snapshot) would not have.
  await stores.engine.saveSnapshot(queueId, { version: latest, state: { ...good!, config: null as never } });

  let loads = 0;
  const countingEngine = { ...stores.engine, load: (id: string) => (loads++, stores.engine.load(id)) };
  const errors: string[] = [];
  const log = { info() {}, warn() {}, error: (_fields: unknown, message: string) => void errors.push(message) };
  const runner = new QueueRunner({ stores: { ...stores, engine: countingEngine }, hosts, log, owner: 'second', pollMs: 100 });
  await runner.start();
  const { entryId, submitted } = await insertEntry(stores, queueId, 7, { facts: null });
  // Not decided: the request is told so (its input waits in the inbox), instead of the input being dropped.
  expect(await runner.dispatch(queueId, submitted)).toBe(false);
  loads = 0;
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  // Two loads per poll (10 polls in a second: the round's, and the check that the state is to blame), not one per
  // database round trip.
  expect(loads).toBeLessThanOrEqual(30);
  expect((await stores.engine.pending(queueId, 10)).map((item) => item.input)).toContainEqual(submitted);
  expect(errors.filter((message) => /cannot be decided/.test(message))).toHaveLength(1);
  expect(errors.filter((message) => /set aside/.test(message))).toEqual([]);
  // The queue says why nothing moves.
  expect((await stores.queues.findById(queueId))?.stalled?.message).toMatch(/cannot be decided/);

  // Fixed: a newer stored state the engine can decide on. The next poll decides what waited.
  await stores.engine.saveSnapshot(queueId, { version: latest + 1, state: good! });
  const decided = await waitFor(
    () => runner.engineState(queueId),
    (state) => state?.entries.some((e) => e.id === entryId) === true,
    10_000,
  );
  expect(decided?.entries.map((e) => e.prNumber)).toEqual([7]);
  await runner.settled(queueId);
  expect(await stores.engine.pending(queueId, 10)).toEqual([]);
  expect((await stores.queues.findById(queueId))?.stalled ?? null).toBeNull();
  await runner.stop();
}, 20_000);
