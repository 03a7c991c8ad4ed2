import type { Stores } from '../ports/stores.js';

/** Reads tried at most, one after another, while the runner keeps recording. */
const ATTEMPTS = 3;

/**
 * Reads that must agree with each other (a board's waiting PRs, its ended PRs, the runs and forecast in the
 * runner's memory) as of one recorded decision: the queue's `recordedThrough` cursor is the same before and after
 * them, else they are made again (a PR ending between two of them would show in neither list, or in both).
 * After a few tries under a steady stream of decisions, the last read is answered.
 */
export async function asOfOneDecision<T>(stores: Stores, queueId: string, read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const { recordedThrough } = await stores.engine.cursors(queueId);
    const value = await read();
    if (attempt === ATTEMPTS || (await stores.engine.cursors(queueId)).recordedThrough === recordedThrough) return value;
  }
}
