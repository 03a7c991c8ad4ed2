import { DEFAULT_PRIORITY } from '../domain/priority.js';
import { isTerminal, type PullRequestState, type StateChangeReason } from '../domain/pull-request-state.js';
import type { PullRequestFacts, QueueEntryRecord, QueueRecord, TimelineEvent } from '../domain/records.js';
import type { RepoRef } from '../domain/repo.js';
import type { GitHostRegistry } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import { findQueue } from './queue-service.js';
import { invalid, notFound, succeed, type Outcome } from './outcome.js';

/** The little of a logger the use cases need (pino and Fastify's both fit). */
export interface WarningLog {
  warn(details: object, message: string): void;
}

export interface PullRequestRef {
  repo: RepoRef;
  targetBranch: string;
  prNumber: number;
}

/** The state change an entry goes through, with its timeline record. */
function transition(entry: QueueEntryRecord, state: PullRequestState, reason: StateChangeReason, at: Date, detail?: string): TimelineEvent {
  entry.state = state;
  entry.stateChangedAt = at;
  if (isTerminal(state)) entry.concludedAt = at;
  return detail ? { at, state, reason, detail } : { at, state, reason };
}

/**
 * Submitting, cancelling and restarting pull requests. Until the queue engine
 * runs (the next issue), a submitted PR waits in NOT_READY; these use cases
 * record the facts and requests the engine will act on.
 */
export function pullRequestService(stores: Stores, hosts: GitHostRegistry, log: WarningLog, now: () => Date = () => new Date()) {
  /** The entry of a PR that was submitted to this queue at least once. */
  async function findEntry(ref: PullRequestRef): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord }>> {
    const queue = await findQueue(stores, ref.repo, ref.targetBranch);
    if (!queue.ok) return queue;
    const entry = await stores.entries.find(queue.value.id, ref.prNumber);
    if (!entry) return notFound(`Pull request #${ref.prNumber} was never submitted to the queue for ${ref.targetBranch}.`);
    return succeed({ queue: queue.value, entry });
  }

  /** Asks the repository host, when one is configured; otherwise the facts stay unknown. */
  async function readFacts(repo: RepoRef, prNumber: number): Promise<Outcome<PullRequestFacts | null>> {
    const host = hosts.forHost(repo.host);
    if (!host) return succeed(null);
    try {
      const facts = await host.readPullRequest(repo, prNumber);
      if (!facts) return notFound(`Pull request #${prNumber} does not exist in ${repo.owner}/${repo.name} on ${repo.host}.`);
      return succeed(facts);
    } catch (error) {
      // An unreachable host must not lose the submission: the engine reads the facts again later.
      log.warn({ err: error, repo, prNumber }, 'could not read pull request from its host');
      return succeed(null);
    }
  }

  return {
    findEntry,

    async submit(ref: PullRequestRef & { priority?: number; noBatch?: boolean }): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord }>> {
      const queue = await findQueue(stores, ref.repo, ref.targetBranch);
      if (!queue.ok) return queue;
      const facts = await readFacts(ref.repo, ref.prNumber);
      if (!facts.ok) return facts;
      if (facts.value?.merged) return invalid(`Pull request #${ref.prNumber} is already merged.`);

      for (;;) {
        const at = now();
        const existing = await stores.entries.find(queue.value.id, ref.prNumber);
        if (!existing) {
          const entry: Omit<QueueEntryRecord, 'id'> = {
            queueId: queue.value.id,
            prNumber: ref.prNumber,
            attempt: 1,
            state: 'NOT_READY',
            priority: ref.priority ?? DEFAULT_PRIORITY,
            noBatch: ref.noBatch ?? false,
            submittedAt: at,
            stateChangedAt: at,
            concludedAt: null,
            facts: facts.value,
            timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }],
          };
          const inserted = await stores.entries.insert(entry);
          if (inserted.ok) return succeed({ queue: queue.value, entry: inserted.value });
          continue; // A concurrent submit of the same PR won the insert: treat it as a re-submit.
        }
        if (existing.state === 'MERGED') return invalid(`Pull request #${ref.prNumber} is already merged.`);
        const events: TimelineEvent[] = [];
        if (isTerminal(existing.state)) {
          // A new attempt of the same entry: back to the end of its priority class.
          existing.attempt += 1;
          existing.submittedAt = at;
          existing.concludedAt = null;
          existing.priority = ref.priority ?? DEFAULT_PRIORITY;
          existing.noBatch = ref.noBatch ?? false;
          events.push(transition(existing, 'NOT_READY', 'resubmitted', at));
        } else {
          if (ref.priority !== undefined) existing.priority = ref.priority;
          if (ref.noBatch !== undefined) existing.noBatch = ref.noBatch;
        }
        if (facts.value) existing.facts = facts.value;
        await stores.entries.save(existing, events);
        existing.timeline.push(...events);
        return succeed({ queue: queue.value, entry: existing });
      }
    },

    async cancel(ref: PullRequestRef): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord }>> {
      const found = await findEntry(ref);
      if (!found.ok) return found;
      const { entry } = found.value;
      if (entry.state === 'CANCELLED') return found; // Cancelling twice is a no-op, so clients may retry.
      if (isTerminal(entry.state)) {
        return invalid(`Pull request #${ref.prNumber} is not in the queue: it is already ${entry.state}.`);
      }
      const event = transition(entry, 'CANCELLED', 'user_requested', now());
      await stores.entries.save(entry, [event]);
      entry.timeline.push(event);
      return found;
    },

    async restart(ref: PullRequestRef): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord }>> {
      const found = await findEntry(ref);
      if (!found.ok) return found;
      const { entry } = found.value;
      if (entry.state !== 'TESTING' && entry.state !== 'PENDING_FAILURE') {
        return invalid(
          `Tests of pull request #${ref.prNumber} can only be restarted while it is TESTING or PENDING_FAILURE; it is ${entry.state}.`,
        );
      }
      // Back to PENDING in the same position (priority and submittedAt unchanged).
      const event = transition(entry, 'PENDING', 'restart_requested', now());
      await stores.entries.save(entry, [event]);
      entry.timeline.push(event);
      return found;
    },

    async setImpactedTargets(input: {
      repo: RepoRef;
      targetBranch: string;
      prNumber: number;
      sha: string;
      targets: string[] | 'ALL';
    }): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord | null; count: number | 'ALL' }>> {
      // Targets usually arrive before the PR is submitted: only the queue must exist.
      const queue = await findQueue(stores, input.repo, input.targetBranch);
      if (!queue.ok) return queue;
      const targets = input.targets === 'ALL' ? 'ALL' : [...new Set(input.targets)];
      await stores.impactedTargets.set({ queueId: queue.value.id, prNumber: input.prNumber, sha: input.sha, targets, setAt: now() });
      const entry = await stores.entries.find(queue.value.id, input.prNumber);
      return succeed({ queue: queue.value, entry, count: targets === 'ALL' ? 'ALL' : targets.length });
    },
  };
}

export type PullRequestService = ReturnType<typeof pullRequestService>;
