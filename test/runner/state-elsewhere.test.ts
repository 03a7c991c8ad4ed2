/**
 * A replica that is not a queue's writer answers status reads and boards from
 * the state it last loaded: one cursor read per answer, the state loaded again
 * only once the writer has recorded a decision since (not a whole-state load
 * per request).
 */
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('state_elsewhere');

/** A queue written by one replica holding PR 1, and a reader replica counting its loads of the queue's state. */
async function writerAndReader(name: string) {
  const { stores } = db;
  const queue = await insertQueue(stores, name);
  const hosts = gitHostRegistry({ 'fake.example': quietHost() });
  const writer = new QueueRunner({ stores, hosts, log: silentLog, owner: 'writer', pollMs: 60_000 });
  const counted = { loads: 0 };
  const counting = { ...stores, engine: { ...stores.engine, load: (id: string) => (counted.loads++, stores.engine.load(id)) } };
  // Never the writer: its lease attempts fail while the writer holds the queue.
  const reader = new QueueRunner({ stores: counting, hosts, log: silentLog, owner: 'reader', pollMs: 60_000 });
  await writer.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  const first = await claimEntry(stores, queue.id, 1);
  expect(await writer.dispatch(queue.id, first.submitted)).toBe(true);
  await writer.settled(queue.id); // Its run started, and nothing more to record.
  return { stores, queue, writer, reader, first, counted };
}

test("a replica that is not the writer loads the queue's state once per recorded decision to answer", async () => {
  const { stores, queue, writer, reader, first, counted } = await writerAndReader('elsewhere');

  for (let i = 0; i < 5; i++) {
    expect((await reader.engineState(queue.id))?.entries.map((e) => e.id)).toEqual([first.entryId]);
    expect((await reader.mergeForecast(queue.id)).byEntry.has(first.entryId)).toBe(true);
  }
  expect(counted.loads).toBe(1);

  // The writer records another decision: the next answer loads the state again, and shows it.
  const second = await claimEntry(stores, queue.id, 2);
  expect(await writer.dispatch(queue.id, second.submitted)).toBe(true);
  await writer.settled(queue.id);
  expect((await reader.engineState(queue.id))?.entries.map((e) => e.id)).toEqual([first.entryId, second.entryId]);
  expect((await reader.mergeForecast(queue.id)).byEntry.has(second.entryId)).toBe(true);
  expect(counted.loads).toBe(2);
  await writer.stop();
  await reader.stop();
});

// Found by a cost review: requests arriving together after a decision each loaded (replayed) the whole state.
test('requests that arrive together on a replica that is not the writer share one load of the state', async () => {
  const { queue, writer, reader, counted } = await writerAndReader('together');
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? reader.engineState(queue.id) : reader.mergeForecast(queue.id))));
  expect(answers).toHaveLength(20);
  expect(counted.loads).toBe(1);
  await writer.stop();
  await reader.stop();
});
