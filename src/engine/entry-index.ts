import type { EngineEntry } from './model.js';

/**
 * Entries by id, kept per entries array across decisions. The engine changes a
 * queue's entries array only by pushing (a submit) and by replacing it without
 * one entry (withoutEntry), so an index made for an array stays true once the
 * entries pushed since are added, and a removal hands it on to the new array
 * less that entry: a decision costs the entries it added and removed, not a
 * pass over the queue. (Any other new array, from a snapshot or a copy, gets a
 * new index.)
 */
interface Index {
  /** How many of the array's entries are indexed (the first `length`). */
  length: number;
  byId: Map<string, EngineEntry>;
  /** Order of arrival in the array: removals keep the others' order, so no number moves when one leaves. */
  arrival: Map<string, number>;
  nextArrival: number;
}

const indexes = new WeakMap<readonly EngineEntry[], Index>();

function indexOf(entries: readonly EngineEntry[]): Index {
  let index = indexes.get(entries);
  if (!index || index.length > entries.length) {
    index = { length: 0, byId: new Map(), arrival: new Map(), nextArrival: 0 };
    indexes.set(entries, index);
  }
  for (let i = index.length; i < entries.length; i++) {
    const added = entries[i] as EngineEntry;
    index.byId.set(added.id, added);
    index.arrival.set(added.id, index.nextArrival++);
  }
  index.length = entries.length;
  return index;
}

export function entryIndex(entries: readonly EngineEntry[]): ReadonlyMap<string, EngineEntry> {
  return indexOf(entries).byId;
}

/**
 * A new array of the entries without this one, its index the old array's less the entry (the old array is left
 * with none and gets a new one if asked again). The array is still copied (cheap); the index, a Map of every
 * entry, is not built again.
 */
export function withoutEntry(entries: readonly EngineEntry[], entry: EngineEntry): EngineEntry[] {
  const index = indexOf(entries);
  const remaining = entries.filter((e) => e !== entry);
  if (remaining.length !== entries.length - 1 || index.byId.get(entry.id) !== entry) return remaining;
  indexes.delete(entries);
  index.byId.delete(entry.id);
  index.arrival.delete(entry.id);
  index.length = remaining.length;
  indexes.set(remaining, index);
  return remaining;
}

/**
 * The entries of these ids still in the array, in its order: what a pass over the whole queue would visit of them
 * (actions and events keep the order they had when every entry was visited), at the cost of the ids given.
 */
export function entriesInOrder(entries: readonly EngineEntry[], ids: Iterable<string>): EngineEntry[] {
  const { byId, arrival } = indexOf(entries);
  const found: Array<[number, EngineEntry]> = [];
  for (const id of new Set(ids)) {
    const entry = byId.get(id);
    if (entry) found.push([arrival.get(id) as number, entry]);
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, entry]) => entry);
}
