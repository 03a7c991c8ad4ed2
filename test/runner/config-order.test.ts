/**
 * Configuration changes decided in another order than they were written. An update writes the queue record and
 * then tells the runner; two updates in a row must end with the second's configuration, whichever input the
 * runner decides last (one may wait in the inbox while the next is handed over, or come from another replica).
 */
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('config-order');
const host = quietHost();

let repoCounter = 0;
const newQueue = () => insertQueue(db.stores, `order${++repoCounter}`, { config: { ...DEFAULT_QUEUE_CONFIG, concurrency: 1 } });

function runner(owner: string, engine: Stores['engine'] = db.stores.engine) {
  return new QueueRunner({ stores: { ...db.stores, engine }, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner, pollMs: 60_000 });
}

/** What an update does: write the record, then tell the runner what it wrote. */
async function update(a: QueueRunner, queueId: string, concurrency: number): Promise<boolean> {
  const updated = await db.stores.queues.update(queueId, { config: { ...DEFAULT_QUEUE_CONFIG, concurrency }, updatedAt: new Date() });
  return a.dispatch(queueId, { type: 'config_changed', config: updated!.config, requestedState: updated!.requestedState });
}

test('an input whose inbox write shows only after a round read the inbox is decided by the round its sender asks for', async () => {
  const queue = await newQueue();
  // The branch head is known (a loading writer then asks the host for nothing, whose answer would read the inbox again).
  const before = runner('before');
  await before.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  await before.settled(queue.id);
  await before.stop();
  // The inbox write of the update lands just after a round (started by a kick) read the inbox.
  let inboxRead!: () => void;
  const read = new Promise<void>((resolve) => (inboxRead = resolve));
  let heldWrites = 0;
  const engine: Stores['engine'] = {
    ...db.stores.engine,
    async enqueue(...args) {
      // The update's own write is held (the load's tick, and its telling the engine the record's settings, go in at once).
      if (args[1].input.type === 'config_changed' && heldWrites === 0) {
        heldWrites++;
        await read;
      }
      return db.stores.engine.enqueue(...args);
    },
    async pending(...args) {
      const items = await db.stores.engine.pending(...args);
      inboxRead();
      return items;
    },
  };
  const a = runner('A', engine);
  const updating = update(a, queue.id, 2);
  a.kick(queue.id);
  // Decided before the request is answered, not left for the next poll (a minute away here).
  expect(await updating).toBe(true);
  expect(heldWrites).toBe(1); // It went through the inbox (no writer was loaded when it came), as this case means.
  expect((await a.engineState(queue.id))?.config.concurrency).toBe(2);
  // The next update is handed over: it is decided after the first, and its configuration stays.
  expect(await update(a, queue.id, 3)).toBe(true);
  await a.settled(queue.id);
  expect((await a.engineState(queue.id))?.config.concurrency).toBe(3);
  await a.stop();
});

test('a configuration change decided after a newer one takes the configuration the record holds now', async () => {
  const queue = await newQueue();
  const a = runner('A');
  await a.dispatch(queue.id, { type: 'tick' });
  await a.settled(queue.id);
  // Another replica wrote concurrency 2 and left its input in the inbox; this one then wrote 3 and decided it.
  await db.stores.queues.update(queue.id, { config: { ...DEFAULT_QUEUE_CONFIG, concurrency: 2 }, updatedAt: new Date() });
  await db.stores.engine.enqueue(queue.id, { queueId: queue.id, input: { type: 'config_changed', config: { ...DEFAULT_QUEUE_CONFIG, concurrency: 2 }, requestedState: 'RUNNING' }, at: Date.now() });
  expect(await update(a, queue.id, 3)).toBe(true);
  expect((await a.engineState(queue.id))?.config.concurrency).toBe(3);
  // The older input, decided last (the next poll), does not undo it; nor does a reload from the log.
  a.kick(queue.id);
  await a.settled(queue.id);
  expect(await db.stores.engine.pending(queue.id, 10)).toEqual([]);
  expect((await a.engineState(queue.id))?.config.concurrency).toBe(3);
  await a.stop();
  const b = runner('B');
  await b.start();
  expect((await b.engineState(queue.id))?.config.concurrency).toBe(3);
  await b.stop();
});
