/** The entry index follows an entries array's pushes, and a new array (a removal) gets its own. */
import { entriesInOrder, entryIndex, withoutEntry } from '../../src/engine/entry-index.js';
import type { EngineEntry } from '../../src/engine/model.js';

const entry = (id: string) => ({ id, prNumber: Number(id.slice(1)) }) as EngineEntry;

test('pushed entries are found, a removal makes a new array with its own index', () => {
  const entries = [entry('e1'), entry('e2')];
  expect([...entryIndex(entries).keys()]).toEqual(['e1', 'e2']);
  entries.push(entry('e3'));
  expect(entryIndex(entries).get('e3')?.prNumber).toBe(3);
  const removed = entries.filter((e) => e.id !== 'e2');
  expect(entryIndex(removed).has('e2')).toBe(false);
  expect([...entryIndex(removed).keys()]).toEqual(['e1', 'e3']);
  // The first array's index is untouched by the second's.
  expect(entryIndex(entries).has('e2')).toBe(true);
});

test('withoutEntry hands the index on: the new array finds the rest in order, the old array is indexed anew', () => {
  const entries = [entry('e1'), entry('e2'), entry('e3')];
  const index = entryIndex(entries);
  const removed = withoutEntry(entries, entries[1] as EngineEntry);
  expect(removed.map((e) => e.id)).toEqual(['e1', 'e3']);
  // The same Map, less the entry: not built again.
  expect(entryIndex(removed)).toBe(index);
  expect([...entryIndex(removed).keys()]).toEqual(['e1', 'e3']);
  removed.push(entry('e4'));
  expect(entriesInOrder(removed, ['e4', 'e3', 'e2', 'e1']).map((e) => e.id)).toEqual(['e1', 'e3', 'e4']);
  // The old array still finds what it holds.
  expect(entryIndex(entries).has('e2')).toBe(true);
  expect(entriesInOrder(entries, ['e3', 'e2']).map((e) => e.id)).toEqual(['e2', 'e3']);
});

test('withoutEntry of an entry the array does not hold removes nothing and shares no index', () => {
  const entries = [entry('e1'), entry('e2')];
  const index = entryIndex(entries);
  const same = withoutEntry(entries, entry('e2'));
  expect(same.map((e) => e.id)).toEqual(['e1', 'e2']);
  expect(entryIndex(same)).not.toBe(index);
  expect(entryIndex(entries)).toBe(index);
});
