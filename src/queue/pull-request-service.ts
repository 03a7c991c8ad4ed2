import { DEFAULT_PRIORITY } from '../domain/priority.js';
import { isTerminal, type PullRequestState, type StateChangeReason } from '../domain/pull-request-state.js';
import type { PullRequestFacts, QueueEntryRecord, QueueRecord, TimelineEvent } from '../domain/records.js';
import { repoKey, type RepoRef } from '../domain/repo.js';
import type { GitHostRegistry } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import { KeyedMutex } from '../concurrency/keyed-mutex.js';
import { findQueue } from './queue-service.js';
import type { QueueRunner } from '../runner/queue-runner.js';
import { engineFacts, engineTargets } from '../runner/engine-inputs.js';
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
 * Submitting, cancelling and restarting pull requests: these use cases record
 * the entry and the host's facts, then hand the request to the queue's runner;
 * the engine decides what the PR's state becomes.
 */
export function pullRequestService(stores: Stores, hosts: GitHostRegistry, runner: QueueRunner, log: WarningLog, now: () => Date = () => new Date()) {
  // Submit, cancel and restart read an entry, change it and write it whole: run one
  // change per PR at a time, or concurrent requests lose each other's writes and
  // record the same transition twice. (Within this process only; several replicas
  // would need a conditional write in the store.)
  const changes = new KeyedMutex();
  const oneAtATime = <T>(ref: PullRequestRef, work: () => Promise<T>): Promise<T> =>
    changes.run(`${repoKey(ref.repo)}\n${ref.targetBranch}\n${ref.prNumber}`, work);

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

  /** Hands a (re-)submitted entry to the engine and answers what it made of it. */
  async function enqueue(queue: QueueRecord, entry: QueueEntryRecord, newAttempt: boolean): Promise<QueueEntryRecord> {
    if (newAttempt) {
      await runner.dispatch(queue.id, {
        type: 'submitted',
        entryId: entry.id,
        prNumber: entry.prNumber,
        priority: entry.priority,
        noBatch: entry.noBatch,
        facts: engineFacts(entry.facts),
        targets: await engineTargets(stores, queue.id, entry.prNumber, entry.facts?.headSha),
      });
    } else {
      await runner.dispatch(queue.id, { type: 'priority_changed', entryId: entry.id, priority: entry.priority, noBatch: entry.noBatch });
    }
    return (await stores.entries.findById(entry.id)) ?? entry;
  }

  return {
    findEntry,

    submit(ref: PullRequestRef & { priority?: number; noBatch?: boolean }): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord }>> {
      return oneAtATime(ref, async () => {
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
            if (inserted.ok) return succeed({ queue: queue.value, entry: await enqueue(queue.value, inserted.value, true) });
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
          return succeed({ queue: queue.value, entry: await enqueue(queue.value, existing, events.length > 0) });
        }
      });
    },

    cancel(ref: PullRequestRef): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord }>> {
      return oneAtATime(ref, async () => {
        const found = await findEntry(ref);
        if (!found.ok) return found;
        const { entry } = found.value;
        if (entry.state === 'CANCELLED') return found; // Cancelling twice is a no-op, so clients may retry.
        if (isTerminal(entry.state)) {
          return invalid(`Pull request #${ref.prNumber} is not in the queue: it is already ${entry.state}.`);
        }
        // Written here as well as by the engine, so a PR the engine never admitted is cancelled too.
        const event = transition(entry, 'CANCELLED', 'user_requested', now());
        await stores.entries.save(entry, [event]);
        entry.timeline.push(event);
        await runner.dispatch(entry.queueId, { type: 'cancelled', entryId: entry.id });
        return found;
      });
    },

    restart(ref: PullRequestRef): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord }>> {
      return oneAtATime(ref, async () => {
        const found = await findEntry(ref);
        if (!found.ok) return found;
        const { entry } = found.value;
        if (entry.state !== 'TESTING' && entry.state !== 'PENDING_FAILURE') {
          return invalid(
            `Tests of pull request #${ref.prNumber} can only be restarted while it is TESTING or PENDING_FAILURE; it is ${entry.state}.`,
          );
        }
        // The engine re-runs the same content in the same place; the timeline records the request.
        const event: TimelineEvent = { at: now(), state: entry.state, reason: 'restart_requested' };
        await stores.entries.save(entry, [event]);
        await runner.dispatch(entry.queueId, { type: 'restart_requested', entryId: entry.id });
        return succeed({ queue: found.value.queue, entry: (await stores.entries.findById(entry.id)) ?? entry });
      });
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
      const forEngine = entry && !isTerminal(entry.state) ? await engineTargets(stores, queue.value.id, input.prNumber, input.sha) : null;
      if (forEngine) await runner.dispatch(queue.value.id, { type: 'impacted_targets_set', prNumber: input.prNumber, targets: forEngine });
      return succeed({ queue: queue.value, entry: entry && ((await stores.entries.findById(entry.id)) ?? entry), count: targets === 'ALL' ? 'ALL' : targets.length });
    },
  };
}

export type PullRequestService = ReturnType<typeof pullRequestService>;
