import type { Stores } from '../../src/ports/stores.js';
import { LiveUpdates } from '../../src/dashboard/live-updates.js';

/** A store whose cursors the test moves, counting the reads. */
function cursorStore() {
  const versions = new Map<string, number>();
  let reads = 0;
  const stores = {
    engine: {
      cursors: async (queueId: string) => {
        reads += 1;
        return { recordedThrough: versions.get(queueId) ?? 0, actedThrough: 0 };
      },
    },
  } as unknown as Stores;
  return { stores, versions, reads: () => reads };
}

test('one read per watched queue per round, however many pages watch it; each page hears each change once', async () => {
  const { stores, versions, reads } = cursorStore();
  const live = new LiveUpdates(stores, 60_000);
  const heard: string[][] = Array.from({ length: 50 }, () => []);
  const stops = heard.map((log) => live.watch(['q1', 'q2'], (c) => log.push(`${c.queueId}@${c.version}`)));
  await live.poll(); // where each queue stands
  expect(reads()).toBe(2);
  versions.set('q1', 3);
  await live.poll();
  await live.poll();
  expect(reads()).toBe(6);
  expect(new Set(heard.map((log) => log.join()))).toEqual(new Set(['q1@3']));
  for (const stop of stops) stop();
  expect(live.watchedQueues).toBe(0);
  await live.poll();
  expect(reads()).toBe(6);
});

test('a page that leaves stops hearing; the others go on', async () => {
  const { stores, versions } = cursorStore();
  const live = new LiveUpdates(stores, 60_000);
  const a: number[] = [];
  const b: number[] = [];
  const stopA = live.watch(['q'], (c) => a.push(c.version));
  live.watch(['q'], (c) => b.push(c.version));
  await live.poll();
  versions.set('q', 1);
  await live.poll();
  stopA();
  versions.set('q', 2);
  await live.poll();
  expect([a, b]).toEqual([[1], [1, 2]]);
  live.stop();
});

test('a viewer given the versions its page read at hears a change the first poll finds; one given none only starts there', async () => {
  const { stores, versions } = cursorStore();
  const live = new LiveUpdates(stores, 60_000);
  const given: number[] = [];
  const none: number[] = [];
  live.watch(['q'], (c) => given.push(c.version), new Map([['q', 0]]));
  live.watch(['q'], (c) => none.push(c.version));
  versions.set('q', 1);
  await live.poll();
  expect([given, none]).toEqual([[1], []]);
  versions.set('q', 2);
  await live.poll();
  expect([given, none]).toEqual([[1, 2], [2]]);
  live.stop();
});
