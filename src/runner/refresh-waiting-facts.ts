import type { HostEvents } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import type { QueueRunner } from './queue-runner.js';

/** How stale a "not mergeable" verdict may get before it is read again (an event that would clear it can be lost). */
export const NOT_MERGEABLE_REREAD_MS = 5 * 60_000;

/**
 * Hosts compute some facts lazily (GitHub answers `mergeable: null` while it
 * works it out) or may have been unreachable when a PR was submitted: PRs
 * waiting in NOT_READY for such a fact are read again, as if they had changed.
 * A PR the host calls not mergeable is read again slowly: what clears it (a
 * resolved review thread, a fork's checks) does not always send us an event.
 */
export async function refreshWaitingFacts(stores: Stores, events: HostEvents, queueIds: string[], now: number = Date.now()): Promise<number> {
  let refreshed = 0;
  for (const queueId of queueIds) {
    const queue = await stores.queues.findById(queueId);
    if (!queue) continue;
    // Only the NOT_READY ones: the rest of a long queue is not read every round.
    for (const entry of await stores.entries.page({ queueId, states: ['NOT_READY'], take: 1_000 })) {
      // Facts the host has not settled, every round; a verdict of not mergeable, only once it is old.
      const facts = entry.facts;
      const unsettled = !facts || facts.mergeability === 'in_progress' || facts.mergeability === 'unspecified';
      const staleVerdict = facts?.mergeability === 'not_mergeable' && now - facts.readAt.getTime() >= NOT_MERGEABLE_REREAD_MS;
      const waiting = unsettled || staleVerdict;
      if (!waiting) continue;
      await events.pullRequestChanged(queue.repo, entry.prNumber);
      refreshed++;
    }
  }
  return refreshed;
}

/**
 * Asks the runner of every queue with PRs in it to read its branch's head again.
 * Push webhooks are how it usually learns; this catches one GitHub lost.
 */
export async function readBaseHeads(stores: Stores, runner: Pick<QueueRunner, 'record'>, queueIds: string[]): Promise<number> {
  let asked = 0;
  for (const queueId of queueIds) {
    if ((await stores.entries.countEnqueued(queueId)) === 0) continue;
    await runner.record(queueId, { type: 'base_head_changed' });
    asked++;
  }
  return asked;
}
