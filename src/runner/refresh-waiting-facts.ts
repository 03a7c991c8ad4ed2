import type { HostMergeability } from '../domain/records.js';
import type { HostEvents } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import type { QueueRunner } from './queue-runner.js';

/** How stale a "not mergeable" verdict may get before it is read again (an event that would clear it can be lost). */
export const NOT_MERGEABLE_REREAD_MS = 5 * 60_000;

const MAX_READ_PER_ROUND = 1_000;

/**
 * A queue's NOT_READY PRs as its writer holds them: the mergeability the host last gave, if any. Also the queued PRs
 * the host would not build because their head was not the one read (`awaitingFacts`): nothing is built with them
 * until their facts are read again, which the runner asks for at once, and this asks again in case that read was lost.
 */
export interface WaitingPullRequest {
  entryId: string;
  prNumber: number;
  mergeability: HostMergeability | null;
  awaitingFacts?: true;
}

/**
 * Hosts compute some facts lazily (GitHub answers `mergeable: null` while it
 * works it out) or may have been unreachable when a PR was submitted: PRs
 * waiting in NOT_READY for such a fact are read again, as if they had changed.
 * A PR the host calls not mergeable is read again slowly: what clears it (a
 * resolved review thread, a fork's checks) does not always send us an event.
 * A queued PR held until its facts are read again (`awaitingFacts`) is read every round while it is held.
 *
 * The waiting PRs come from the queue's writer (`waitingOf`, its state in memory; null when another replica
 * writes the queue, and refreshes it): a query of the entries by queue and state, every 15 seconds for every
 * queue, is a pass over every entry stored on the local FerretDB (3 s a queue with 24,000 entries stored). Only
 * a "not mergeable" verdict's age is read, from that entry by _id, and at most once per NOT_MERGEABLE_REREAD_MS
 * (`checked`, kept by the caller between rounds: read every round, it was a read per blocked PR every 15 s).
 */
export async function refreshWaitingFacts(
  stores: Stores,
  events: HostEvents,
  waitingOf: (queueId: string) => WaitingPullRequest[] | null,
  queueIds: string[],
  now: number = Date.now(),
  checked: Map<string, number> = new Map(),
): Promise<number> {
  for (const [entryId, at] of checked) if (now - at >= NOT_MERGEABLE_REREAD_MS) checked.delete(entryId);
  let refreshed = 0;
  for (const queueId of queueIds) {
    const waiting = waitingOf(queueId);
    if (!waiting || waiting.length === 0) continue;
    const queue = await stores.queues.findById(queueId);
    if (!queue) continue;
    // At most a thousand reads a queue each round (each costs the host a request); counted among the PRs due, so
    // the ones past the first thousand waiting are reached too (found by review: they were never read again).
    let reads = 0;
    for (const pr of waiting) {
      if (reads >= MAX_READ_PER_ROUND) break;
      // Facts the host has not settled, or that the queue waits for, every round; a verdict of not mergeable, only once it is old.
      const unsettled = pr.awaitingFacts === true || pr.mergeability === null || pr.mergeability === 'in_progress' || pr.mergeability === 'unspecified';
      if (!unsettled && pr.mergeability !== 'not_mergeable') continue;
      if (!unsettled) {
        if (checked.has(pr.entryId)) continue;
        const readAt = (await stores.entries.findById(pr.entryId))?.facts?.readAt.getTime();
        // Its age is looked at again once the verdict (or this read of it) is NOT_MERGEABLE_REREAD_MS old.
        checked.set(pr.entryId, readAt !== undefined && now - readAt < NOT_MERGEABLE_REREAD_MS ? readAt : now);
        if (readAt !== undefined && now - readAt < NOT_MERGEABLE_REREAD_MS) continue;
      }
      await events.pullRequestChanged(queue.repo, pr.prNumber);
      refreshed++;
      reads++;
    }
  }
  return refreshed;
}

/**
 * Asks the runner of every queue with PRs in it to read its branch's head again.
 * Push webhooks are how it usually learns; this catches one GitHub lost. Whether a queue holds PRs comes from its
 * writer's memory too (`enqueuedOf`; null on another replica, whose own round asks), not a count of the entries.
 */
export async function readBaseHeads(runner: Pick<QueueRunner, 'record'>, enqueuedOf: (queueId: string) => number | null, queueIds: string[]): Promise<number> {
  let asked = 0;
  for (const queueId of queueIds) {
    if (!enqueuedOf(queueId)) continue;
    await runner.record(queueId, { type: 'base_head_changed' });
    asked++;
  }
  return asked;
}
