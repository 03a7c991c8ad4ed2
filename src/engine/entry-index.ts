import type { EngineEntry } from './model.js';

/**
 * Entries by id, kept per entries array across decisions. The engine changes a
 * queue's entries array only by pushing (a submit) and replaces it to remove
 * one (a filter makes a new array), so an index made for an array stays true
 * once the entries pushed since are added: a decision costs the entries it
 * added, not a pass over the queue. (A new array, from a removal, a snapshot or
 * a copy, gets a new index.)
 */
const indexes = new WeakMap<readonly EngineEntry[], { length: number; byId: Map<string, EngineEntry> }>();

export function entryIndex(entries: readonly EngineEntry[]): ReadonlyMap<string, EngineEntry> {
  let index = indexes.get(entries);
  if (!index || index.length > entries.length) {
    index = { length: 0, byId: new Map() };
    indexes.set(entries, index);
  }
  for (let i = index.length; i < entries.length; i++) {
    const added = entries[i] as EngineEntry;
    index.byId.set(added.id, added);
  }
  index.length = entries.length;
  return index.byId;
}
