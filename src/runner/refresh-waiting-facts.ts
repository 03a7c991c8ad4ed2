import type { HostEvents } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';

/**
 * Hosts compute some facts lazily (GitHub answers `mergeable: null` while it
 * works it out), some change without an event we hear of (a review approved
 * elsewhere), and a host may have been unreachable when a PR was submitted:
 * PRs waiting in NOT_READY on mergeability are read again, as if they had changed.
 */
export async function refreshWaitingFacts(stores: Stores, events: HostEvents, queueIds: string[]): Promise<number> {
  let refreshed = 0;
  for (const queueId of queueIds) {
    const queue = await stores.queues.findById(queueId);
    if (!queue) continue;
    for (const entry of await stores.entries.listEnqueued(queueId)) {
      // not_mergeable too: on GitHub it includes "blocked" (reviews or required checks missing), which changes without a push.
      const waiting = entry.state === 'NOT_READY' && (!entry.facts || entry.facts.mergeability !== 'mergeable');
      if (!waiting) continue;
      await events.pullRequestChanged(queue.repo, entry.prNumber);
      refreshed++;
    }
  }
  return refreshed;
}
