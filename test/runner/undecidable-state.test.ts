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
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

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
  const { entryId, submitted } = await claimEntry(stores, queueId, 7, { facts: null });
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

test('an input that cannot be applied while the stored state cannot be read waits (nothing is set aside on a guess); readable again, it is set aside', async () => {
  const { stores } = db;
  const queueId = (await insertQueue(stores, 'unreadable', { requestedState: 'PAUSED' })).id;
  let unreadable = false;
  const engine = {
    ...stores.engine,
    load: async (id: string) => {
      if (unreadable) throw new Error('connection reset');
      return stores.engine.load(id);
    },
  };
  const messages: string[] = [];
  const log = { info() {}, warn: (_fields: unknown, message: string) => void messages.push(message), error: (_fields: unknown, message: string) => void messages.push(message) };
  const runner = new QueueRunner({ stores: { ...stores, engine }, hosts, log, owner: 'unreadable', pollMs: 100 });
  await runner.dispatch(queueId, { type: 'base_moved', sha: 'base0' });
  await runner.settled(queueId);
  // A bug in one input (a resubmission that names no PR), met while the database cannot be read.
  const broken = { type: 'resubmitted' as const, attempt: 2, submitted: null as never };
  unreadable = true;
  expect(await runner.dispatch(queueId, broken)).toBe(false);
  expect(messages.some((m) => /could not be read to tell why/.test(m))).toBe(true);
  expect(messages.filter((m) => /set aside|cannot be decided/.test(m))).toEqual([]);
  expect((await stores.engine.pending(queueId, 10)).map((item) => item.input.type)).toContain('resubmitted');

  unreadable = false;
  await waitFor(
    async () => messages,
    (seen) => seen.some((m) => /set aside/.test(m)),
    10_000,
  );
  await runner.settled(queueId);
  expect(await stores.engine.pending(queueId, 10)).toEqual([]);
  expect(messages.filter((m) => /cannot be decided/.test(m))).toEqual([]);
  await runner.stop();
}, 20_000);
