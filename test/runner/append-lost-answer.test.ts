/**
 * Storing a decision is one insert under a unique key. When the database wrote
 * it but its answer was lost (a reset connection, a time-out), the insert
 * throws although the decision is durable: the request that caused it must
 * not be answered as a failure, and a writer must not take another's decision
 * for its own.
 */
import { jest } from '@jest/globals';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, storesModel, useRunnerDatabaseWithDriver } from './support/runner-fixture.js';

const db = useRunnerDatabaseWithDriver('append_lost_answer');

/** The next `times` inserts into the log are written, then answered with a reset connection. */
function loseAnswers(times: number) {
  const Decisions = storesModel(db.raw.databaseName, 'queue_engine_decisions');
  const create = Decisions.create.bind(Decisions) as (...args: unknown[]) => Promise<unknown>;
  let left = times;
  return jest.spyOn(Decisions, 'create').mockImplementation((async (...args: unknown[]) => {
    const created = await create(...args);
    if (left-- <= 0) return created;
    throw Object.assign(new Error('connection 3 to 127.0.0.1:27017 closed'), { name: 'MongoNetworkError' });
  }) as never);
}

afterEach(() => jest.restoreAllMocks());

test("a decision written whose answer was lost counts as stored; another writer's at that version does not", async () => {
  const engine = db.stores.engine;
  await engine.saveSnapshot('lost-answer', { version: 0, state: {} as never });
  const spy = loseAnswers(1);
  await expect(engine.append({ queueId: 'lost-answer', version: 1, epoch: 7, items: [], actions: [] })).resolves.toBe(true);
  jest.restoreAllMocks();
  expect(spy).toHaveBeenCalledTimes(1);
  // Another writer (epoch 8) stored version 2; epoch 7's insert of it is written nowhere and its answer is lost too.
  await engine.append({ queueId: 'lost-answer', version: 2, epoch: 8, items: [], actions: [] });
  const Decisions = storesModel(db.raw.databaseName, 'queue_engine_decisions');
  jest.spyOn(Decisions, 'create').mockRejectedValueOnce(Object.assign(new Error('connection closed'), { name: 'MongoNetworkError' }) as never);
  await expect(engine.append({ queueId: 'lost-answer', version: 2, epoch: 7, items: [], actions: [] })).resolves.toBe(false);
  const log = await engine.load('lost-answer');
  expect(log?.decisions.map((d) => [d.version, d.epoch])).toEqual([
    [1, 7],
    [2, 8],
  ]);
});

test('a write the server answered with an error (a write concern not met) is not taken as stored, even if a copy is found', async () => {
  const Decisions = storesModel(db.raw.databaseName, 'queue_engine_decisions');
  const create = Decisions.create.bind(Decisions) as (...args: unknown[]) => Promise<unknown>;
  jest.spyOn(Decisions, 'create').mockImplementationOnce((async (...args: unknown[]) => {
    await create(...args);
    throw Object.assign(new Error('waiting for replication timed out'), { name: 'MongoWriteConcernError', code: 64, writeConcernError: { code: 64, errmsg: 'waiting for replication timed out' } });
  }) as never);
  await db.stores.engine.saveSnapshot('wc-error', { version: 0, state: {} as never });
  await expect(db.stores.engine.append({ queueId: 'wc-error', version: 1, epoch: 3, items: [], actions: [] })).rejects.toThrow('waiting for replication timed out');
});

test('an insert that failed before writing still fails', async () => {
  const Decisions = storesModel(db.raw.databaseName, 'queue_engine_decisions');
  jest.spyOn(Decisions, 'create').mockRejectedValueOnce(new Error('connection refused') as never);
  await expect(db.stores.engine.append({ queueId: 'not-written', version: 1, epoch: 1, items: [], actions: [] })).rejects.toThrow('connection refused');
});

test('through the runner: a submit whose decision was written but unanswered is answered decided, and decided once', async () => {
  const queue = await insertQueue(db.stores, 'lost');
  const runner = new QueueRunner({ stores: db.stores, hosts: gitHostRegistry({ 'fake.example': quietHost() }), log: silentLog, owner: 'A', pollMs: 60_000 });
  await runner.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  loseAnswers(1);
  expect(await runner.dispatch(queue.id, (await claimEntry(db.stores, queue.id, 1)).submitted)).toBe(true);
  jest.restoreAllMocks();
  expect(await runner.dispatch(queue.id, (await claimEntry(db.stores, queue.id, 2)).submitted)).toBe(true);
  await runner.settled(queue.id);
  await runner.stop();
  const log = await db.stores.engine.load(queue.id);
  const submitted = log!.decisions.flatMap((d) => d.items.map((item) => item.input)).filter((input) => input.type === 'submitted');
  expect(submitted.map((input) => (input as { prNumber: number }).prNumber)).toEqual([1, 2]);
  expect((await db.stores.entries.find(queue.id, 1))?.state).not.toBe('NOT_READY');
});
