/** The entry index follows an entries array's pushes, and a new array (a removal) gets its own. */
import { entryIndex } from '../../src/engine/entry-index.js';
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
