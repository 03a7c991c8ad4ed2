import type { PullRequestState, StateChangeReason } from '../../src/domain/pull-request-state.js';
import type { QueueEntryRecord } from '../../src/domain/records.js';
import type { Stores } from '../../src/ports/stores.js';

/**
 * Puts an entry in a state the engine could have reached, through the store's
 * own transition write (the runner's), keyed just after the runner's last write
 * to it, so later decisions still apply. The write is checked, so a test never
 * goes on from a state it did not reach.
 */
export async function forceEntryState(stores: Stores, entry: QueueEntryRecord, state: PullRequestState, reason: StateChangeReason, at: Date): Promise<QueueEntryRecord> {
  const current = await stores.entries.findById(entry.id);
  await stores.entries.recordTransition(entry.id, { at, state, reason }, (current?.recordedKey ?? 0) + 1);
  const written = await stores.entries.findById(entry.id);
  if (written?.state !== state) throw new Error(`could not force entry ${entry.id} to ${state} (it is ${written?.state})`);
  return written;
}
