import type { HostEvents } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';

/**
 * Hosts compute some facts lazily (GitHub answers `mergeable: null` while it
 * works it out) or may have been unreachable when a PR was submitted: PRs
 * waiting in NOT_READY for such a fact are read again, as if they had changed.
 */
export async function refreshWaitingFacts(stores: Stores, events: HostEvents, queueIds: string[]): Promise<number> {
  let refreshed = 0;
  for (const queueId of queueIds) {
    const queue = await stores.queues.findById(queueId);
    if (!queue) continue;
    // Only the NOT_READY ones: the rest of a long queue is not read every round.
    for (const entry of await stores.entries.page({ queueId, states: ['NOT_READY'], take: 1_000 })) {
      // Only facts the host has not settled: a PR GitHub calls not mergeable changes by an event
      // we hear of (a push, a review, its checks), so reading it every round would only spend API calls.
      const waiting = !entry.facts || entry.facts.mergeability === 'in_progress' || entry.facts.mergeability === 'unspecified';
      if (!waiting) continue;
      await events.pullRequestChanged(queue.repo, entry.prNumber);
      refreshed++;
    }
  }
  return refreshed;
}
