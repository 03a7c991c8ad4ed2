/**
 * The stall alert through the real runner: a queue that stops moving with PRs
 * in line shows `queue_stalled` in getQueue's problems (the runner writes it
 * on the queue record, alone), and the problem clears when the queue moves.
 */
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import type { Stores } from '../../src/ports/stores.js';
import { queueView } from '../../src/queue/views.js';
import { outgoingEvents } from '../../src/runner/webhook-events.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';
import { RunnerWorld } from './support/runner-world.js';

let database: TestDatabaseUri;
let stores: Stores;
beforeAll(async () => {
  database = await createTestDatabaseUri('stall');
  stores = await openMongoStores({ uri: database.uri });
});
afterAll(async () => {
  await stores.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

const submit = (pr: number) => ({ kind: 'submit' as const, pr, priority: 100, noBatch: true, breaks: false, targets: 'ALL' as const, conflictsWith: null });

test('stalled after stallAlertMinutes without progress, shown in getQueue; cleared once a run finishes', async () => {
  const world = await RunnerWorld.create(stores, 'stalling');
  await world.apply({ kind: 'config', config: { testingTimeoutMinutes: 600, stallAlertMinutes: 30 }, requestedState: 'RUNNING' });
  for (const pr of [1, 2, 3]) await world.apply(submit(pr));
  await world.settle();
  const problems = async () => queueView(stores, (await stores.queues.findById(world.queue.id))!).then((v) => v.problems);

  await world.apply({ kind: 'tick', minutes: 29 });
  await world.settle();
  expect(await problems()).toEqual([]);
  await world.apply({ kind: 'tick', minutes: 2 });
  await world.settle();
  expect(await problems()).toEqual([expect.objectContaining({ kind: 'queue_stalled', message: expect.stringMatching(/for 30 minutes while 3 pull requests wait/) })]);

  await world.apply({ kind: 'finish', pick: 0, flaky: false });
  await world.settle();
  expect(await problems()).toEqual([]);
});

test('queue.stalled and queue.resumed go out as one event each, for the queue (pr_number null)', async () => {
  const { queue } = await RunnerWorld.create(stores, 'events');
  const [event] = await outgoingEvents(stores, queue, { seq: 7, type: 'queue.stalled', prNumbers: [] }, new Date(0));
  expect(await outgoingEvents(stores, queue, { seq: 8, type: 'queue.resumed', prNumbers: [] }, new Date(0))).toHaveLength(1);
  expect(event).toEqual({
    id: `evt_${queue.id}_7_queue`,
    orderingKey: `${queue.id}:queue`,
    sequence: 7,
    payload: expect.objectContaining({ type: 'queue.stalled', pr_number: null, target_branch: 'main', repository: queue.repo }),
  });
});
