import type { EngineEntry } from './model.js';

/**
 * Entries by id, kept per entries array across decisions. The engine changes a
 * queue's entries array only by pushing (a submit) and replaces it to remove
 * one (a filter makes a new array), so an index made for an array stays true
 * once the entries pushed since are added: a decision costs the entries it
 * added, not a pass over the queue. (A new array, from a removal, a snapshot or
 * a copy, gets a new index.)
 */
const indexes = new WeakMap<readonly EngineEntry[], { length: number; byId: Map<string, EngineEntry>; positions: Map<string, number> }>();

function indexOf(entries: readonly EngineEntry[]) {
  let index = indexes.get(entries);
  if (!index || index.length > entries.length) {
    index = { length: 0, byId: new Map(), positions: new Map() };
    indexes.set(entries, index);
  }
  for (let i = index.length; i < entries.length; i++) {
    const added = entries[i] as EngineEntry;
    index.byId.set(added.id, added);
    index.positions.set(added.id, i);
  }
  index.length = entries.length;
  return index;
}

export function entryIndex(entries: readonly EngineEntry[]): ReadonlyMap<string, EngineEntry> {
  return indexOf(entries).byId;
}

/**
 * The entries of these ids still in the array, in its order: what a pass over the whole queue would visit of them
 * (actions and events keep the order they had when every entry was visited), at the cost of the ids given.
 */
export function entriesInOrder(entries: readonly EngineEntry[], ids: Iterable<string>): EngineEntry[] {
  const { byId, positions } = indexOf(entries);
  const found: Array<[number, EngineEntry]> = [];
  for (const id of new Set(ids)) {
    const entry = byId.get(id);
    if (entry) found.push([positions.get(id) as number, entry]);
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, entry]) => entry);
}
