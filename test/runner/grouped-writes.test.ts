/**
 * Group commit of inserts: concurrent callers share one insertMany per turn,
 * in the order they asked; a group that fails is tried one document at a
 * time, so each caller hears about its own document only.
 */
import { GroupedWrites } from '../../src/adapters/mongo/grouped-writes.js';

function fakeCollection(options: { refuse?: (doc: number) => boolean; failGroupsAfter?: number } = {}) {
  const stored: number[] = [];
  const groups: number[][] = [];
  const one = async (doc: number) => {
    if (stored.includes(doc) || options.refuse?.(doc)) throw new Error(`duplicate ${doc}`);
    stored.push(doc);
  };
  const inserts = new GroupedWrites<number>(
    async (docs) => {
      groups.push(docs);
      // Like an ordered insertMany: the documents before the failing one stay inserted.
      for (const [i, doc] of docs.entries()) {
        if (options.failGroupsAfter !== undefined && i === options.failGroupsAfter) throw new Error('connection lost');
        await one(doc);
      }
    },
    one,
    async (doc) => stored.includes(doc) && !options.refuse?.(doc),
  );
  return { stored, groups, inserts };
}

test('callers of one turn share one group, in the order they asked', async () => {
  const { stored, groups, inserts } = fakeCollection();
  await Promise.all(Array.from({ length: 30 }, (_, i) => inserts.write(i)));
  expect(groups).toHaveLength(1);
  expect(stored).toEqual(Array.from({ length: 30 }, (_, i) => i));
});

test('callers arriving while a group is being written form the next group, after it', async () => {
  const { stored, groups, inserts } = fakeCollection();
  const first = Promise.all([1, 2, 3].map((n) => inserts.write(n)));
  await new Promise((resolve) => setImmediate(resolve));
  const second = Promise.all([4, 5].map((n) => inserts.write(n)));
  await Promise.all([first, second]);
  expect(groups).toEqual([[1, 2, 3], [4, 5]]);
  expect(stored).toEqual([1, 2, 3, 4, 5]);
});

test('a refused document fails its own caller only; the group inserted before failing answers as inserted', async () => {
  const { stored, inserts } = fakeCollection({ refuse: (doc) => doc === 3 });
  const outcomes = await Promise.allSettled([1, 2, 3, 4, 5].map((n) => inserts.write(n)));
  expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
  expect([...stored].sort()).toEqual([1, 2, 4, 5]);
});

test('a group lost part-way is finished one by one, and no document is written twice', async () => {
  const { stored, inserts } = fakeCollection({ failGroupsAfter: 2 });
  const outcomes = await Promise.allSettled([1, 2, 3, 4].map((n) => inserts.write(n)));
  expect(outcomes.every((o) => o.status === 'fulfilled')).toBe(true);
  expect([...stored].sort()).toEqual([1, 2, 3, 4]);
});
