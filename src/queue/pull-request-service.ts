import { DEFAULT_PRIORITY, isPriority, MAX_PRIORITY_VALUE } from '../domain/priority.js';
import { isTerminal } from '../domain/pull-request-state.js';
import type { PullRequestFacts, QueueEntryRecord, QueueRecord } from '../domain/records.js';
import type { EngineEvent, ImpactedTargets } from '../engine/model.js';
import { repoKey, type RepoRef } from '../domain/repo.js';
import type { GitHostRegistry } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import { KeyedMutex } from '../concurrency/keyed-mutex.js';
import { findQueue, noQueue } from './queue-service.js';
import type { QueueRunner } from '../runner/queue-runner.js';
import { asEngineTargets, engineFacts, engineTargets } from '../runner/engine-inputs.js';
import { invalid, notFound, succeed, type Outcome } from './outcome.js';
import type { PullRequestStatus, PullRequestStatusCache } from './status-cache.js';
import { shownTargets } from './views.js';

/** The little of a logger the use cases need (pino and Fastify's both fit). */
export interface WarningLog {
  warn(details: object, message: string): void;
}

/** How long a status read or a submit may use a queue record read before (see recentQueue). */
const QUEUE_READ_TTL_MS = 1000;

export interface PullRequestRef {
  repo: RepoRef;
  targetBranch: string;
  prNumber: number;
}

const neverSubmitted = (ref: PullRequestRef) => notFound(`Pull request #${ref.prNumber} was never submitted to the queue for ${ref.targetBranch}.`);

/**
 * Submitting, cancelling and restarting pull requests: these use cases check
 * the request, record it in the queue's inbox and wait for the engine's
 * decision (database only). The runner alone writes entries and reads remote
 * hosts; a new submission's claim on its PR (the key holding its first record)
 * is the only write made here.
 */
export function pullRequestService(
  stores: Stores,
  hosts: GitHostRegistry,
  runner: QueueRunner,
  log: WarningLog,
  now: () => Date = () => new Date(),
  statusCache?: PullRequestStatusCache,
) {
  // Requests for one PR are checked one at a time, so two concurrent submits of
  // an ended PR record one new attempt, not two. Across replicas the runner's
  // decision settles it (a re-submit of an entry the engine holds only sets its priority).
  const changes = new KeyedMutex();
  const oneAtATime = <T>(ref: PullRequestRef, work: () => Promise<T>): Promise<T> =>
    changes.run(`${repoKey(ref.repo)}\n${ref.targetBranch}\n${ref.prNumber}`, work);

  /** The queue a request names, as this process read it at most a second ago (see QueueStore.find). */
  const recentQueue = (ref: Omit<PullRequestRef, 'prNumber'>) => findQueue(stores, ref.repo, ref.targetBranch, { maxAgeMs: QUEUE_READ_TTL_MS });

  /**
   * A PR's entry and the targets its view shows, for a status read (the queue record may be up to a second old);
   * from memory while this replica writes the queue (see PullRequestStatusCache).
   */
  async function readStatus(ref: PullRequestRef): Promise<Outcome<{ queue: QueueRecord } & PullRequestStatus>> {
    const found = await recentQueue(ref);
    if (!found.ok) return found;
    const queue = found.value;
    const load = async () => {
      const entry = await stores.entries.find(queue.id, ref.prNumber);
      return entry ? { entry, targets: await shownTargets(stores, queue, entry) } : null;
    };
    const status = statusCache ? await statusCache.read(queue.id, ref.prNumber, load) : await load();
    if (!status) return neverSubmitted(ref);
    return succeed({ queue, ...status });
  }

  /** The entry of a PR that was submitted to this queue at least once. */
  async function findEntry(ref: PullRequestRef): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord }>> {
    return entryIn(await findQueue(stores, ref.repo, ref.targetBranch), ref);
  }

  async function entryIn(found: Outcome<QueueRecord>, ref: PullRequestRef): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord }>> {
    if (!found.ok) return found;
    const entry = await stores.entries.find(found.value.id, ref.prNumber);
    if (!entry) return neverSubmitted(ref);
    return succeed({ queue: found.value, entry });
  }

  /**
   * Facts a request may read inline: only from a host that answers from this
   * service's database (the sandbox). Remote hosts are read by the runner.
   */
  async function readFacts(repo: RepoRef, prNumber: number): Promise<Outcome<PullRequestFacts | null>> {
    const host = hosts.forHost(repo.host);
    if (!host?.answersLocally) return succeed(null);
    try {
      const facts = await host.readPullRequest(repo, prNumber);
      if (!facts) return notFound(`Pull request #${prNumber} does not exist in ${repo.owner}/${repo.name} on ${repo.host}.`);
      return succeed(facts);
    } catch (error) {
      // An unreachable host must not lose the submission: the runner reads the facts again.
      log.warn({ err: error, repo, prNumber }, 'could not read pull request from its host');
      return succeed(null);
    }
  }

  async function submittedEvent(
    queue: QueueRecord,
    entry: QueueEntryRecord,
    facts: PullRequestFacts | null,
    priority: number,
    noBatch: boolean,
    risk: number | undefined,
    targets: Promise<ImpactedTargets | null> = engineTargets(stores, queue.id, entry.prNumber, facts?.headSha),
  ): Promise<SubmittedEvent> {
    return {
      type: 'submitted',
      entryId: entry.id,
      prNumber: entry.prNumber,
      priority,
      noBatch,
      ...(risk !== undefined ? { risk } : {}),
      facts: engineFacts(facts),
      targets: await targets,
    };
  }

  /**
   * The entry once the runner decided about it: as this process's runner just wrote it when the
   * decision was made here (the runner is its only writer, so that is current), else read.
   */
  async function entryAfter(entry: QueueEntryRecord, decidedHere: boolean): Promise<QueueEntryRecord> {
    return (decidedHere ? stores.entries.lastWritten(entry.id) : null) ?? (await stores.entries.findById(entry.id)) ?? entry;
  }

  /**
   * Hands a (re-)submitted entry to the runner and answers what the engine made of it (and whether it was decided
   * here); a 404 when the queue was deleted meanwhile.
   */
  async function enqueue(
    queue: QueueRecord,
    entry: QueueEntryRecord,
    submitted: SubmittedEvent,
    attempt: number | null,
    refresh: boolean,
  ): Promise<Outcome<{ entry: QueueEntryRecord; decidedHere: boolean }>> {
    const decidedHere = await runner.dispatch(queue.id, attempt === null ? submitted : { type: 'resubmitted', attempt, submitted });
    // Not decided here: the queue (read up to a second ago) may have been deleted since, and the submission with it;
    // answered 200, it would be lost. (Decided here, a deletion on this replica waited for the decision and refused.)
    if (!decidedHere && !(await stores.queues.findById(queue.id))) return noQueue(queue.repo, queue.targetBranch);
    // After the submit, so the facts read in the background find the engine holding the entry.
    if (refresh) await runner.record(queue.id, { type: 'refresh_pull_request', prNumber: entry.prNumber });
    return succeed({ entry: await entryAfter(entry, decidedHere), decidedHere });
  }

  /** Stores an upload of a PR's impacted targets and tells the engine when it holds the PR. */
  async function storeTargets(input: ImpactedTargetsUpload): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord | null; count: number | 'ALL' }>> {
    // Targets usually arrive before the PR is submitted: only the queue must exist.
    const queue = await findQueue(stores, input.repo, input.targetBranch);
    if (!queue.ok) return queue;
    const targets = input.targets === 'ALL' ? 'ALL' : [...new Set(input.targets)];
    await stores.impactedTargets.set({ queueId: queue.value.id, prNumber: input.prNumber, sha: input.sha, targets, setAt: now() });
    const entry = await stores.entries.find(queue.value.id, input.prNumber);
    const count = targets === 'ALL' ? 'ALL' : targets.length;
    if (!entry || isTerminal(entry.state)) return succeed({ queue: queue.value, entry, count });
    // The engine is told what was just stored (not read back), and the entry read again as the engine left it.
    await runner.dispatch(queue.value.id, { type: 'impacted_targets_set', prNumber: input.prNumber, targets: asEngineTargets(input.sha, targets) });
    return succeed({ queue: queue.value, entry: (await stores.entries.findById(entry.id)) ?? entry, count });
  }

  return {
    readStatus,

    /**
     * `targets: null` in the answer: the PR's head is known to have no impacted targets (read while submitting).
     * `headSha`: the head the sender submits (a label or command names the one it saw): another head read for it is a
     * push, which cancels the submission. `label`: submitted by adding this label; the first facts read since,
     * without it, take the PR out (EngineEntry.submittedByLabel).
     */
    submit(ref: PullRequestRef & { priority?: number; noBatch?: boolean; riskHint?: number; headSha?: string; label?: string }): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord; targets?: null }>> {
      // What a new attempt was submitted for (an entry already queued keeps its own: it was queued another way).
      const label = ref.label?.toLowerCase();
      const pinned = (event: SubmittedEvent): SubmittedEvent => ({ ...event, ...(ref.headSha ? { headSha: ref.headSha } : {}), ...(label ? { label } : {}) });
      // Every way in (the API validates too, a comment command parses its own): no priority the views cannot show is stored.
      if (ref.priority !== undefined && !isPriority(ref.priority)) return Promise.resolve(invalid(`A priority is an integer from 0 to ${MAX_PRIORITY_VALUE}.`));
      return oneAtATime(ref, async () => {
        // A submit needs only the queue's id (the engine decides with its own copy of the settings):
        // a record up to a second old saves a read per submit, the busiest write there is.
        const found = await recentQueue(ref);
        if (!found.ok) return found;
        const queue = found.value;
        const facts = await readFacts(ref.repo, ref.prNumber);
        if (!facts.ok) return facts;
        if (facts.value?.merged) return invalid(`Pull request #${ref.prNumber} is already merged.`);
        // Without facts read here (a remote host), the runner reads them in the background.
        const refresh = facts.value === null;

        for (;;) {
          // Before the targets are read: a decision that takes in an upload for the PR after this is seen by the status cache.
          const mark = statusCache?.mark(queue.id);
          // Read while the entry is written: they need only the head, and most submits insert.
          const targets = engineTargets(stores, queue.id, ref.prNumber, facts.value?.headSha);
          targets.catch(() => undefined); // Awaited below when the insert succeeds; a failed insert ends the request first.
          const at = now();
          // Most submits are of PRs never seen: claim the PR first (its unique key says when the PR has an entry).
          const priority = ref.priority ?? DEFAULT_PRIORITY;
          const noBatch = ref.noBatch ?? false;
          const claimed = await stores.entries.claim({
            queueId: queue.id,
            prNumber: ref.prNumber,
            attempt: 1,
            state: 'NOT_READY',
            priority,
            noBatch,
            submittedAt: at,
            stateChangedAt: at,
            concludedAt: null,
            facts: facts.value,
            timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }],
          });
          if (claimed.ok) {
            const submitted = pinned(await submittedEvent(queue, claimed.value, facts.value, priority, noBatch, ref.riskHint, targets));
            const enqueued = await enqueue(queue, claimed.value, submitted, null, refresh);
            if (!enqueued.ok) return enqueued;
            const { entry, decidedHere } = enqueued.value;
            // The targets were just read for this head, and there were none: the answer need not read them again.
            const withoutTargets = submitted.targets === null && facts.value !== null && entry.facts?.headSha === facts.value.headSha;
            if (withoutTargets && decidedHere && mark) statusCache?.submitted(mark, ref.prNumber, entry.id);
            return succeed({ queue, entry, ...(withoutTargets ? { targets: null } : {}) });
          }
          // The PR's entry, or its submission waiting for a decision (another replica's writer decides it).
          const existing = await stores.entries.find(queue.id, ref.prNumber);
          if (!existing) continue; // Deleted between the two: try again.
          if (existing.state === 'MERGED') return invalid(`Pull request #${ref.prNumber} is already merged.`);
          // What was just read of the PR is recorded by the runner, the entry's one writer (a write here raced its
          // record step), in a decision before the submit's.
          if (facts.value) {
            const event = { type: 'pr_facts_changed' as const, prNumber: existing.prNumber, facts: engineFacts(facts.value), merged: facts.value.merged };
            await runner.dispatch(queue.id, { type: 'pr_facts_read', entryId: existing.id, facts: facts.value, event });
          }
          const known = facts.value ?? existing.facts;
          if (isTerminal(existing.state)) {
            // A new attempt of the same entry: back to the end of its priority class. With the facts just read, or none
            // (a remote host: the runner reads them): the last attempt's are of a head the PR may have left since (it
            // failed, its author pushed a fix), and a push after the submission cancels it.
            const submitted = pinned(await submittedEvent(queue, existing, facts.value, ref.priority ?? DEFAULT_PRIORITY, ref.noBatch ?? false, ref.riskHint, facts.value ? targets : Promise.resolve(null)));
            const enqueued = await enqueue(queue, existing, submitted, existing.attempt + 1, refresh);
            return enqueued.ok ? succeed({ queue, entry: enqueued.value.entry }) : enqueued;
          }
          // Already queued: only its priority, noBatch and risk hint change. Sent as a submit, so a submission never
          // decided (its writer died before storing the decision) is taken in now.
          const submitted = await submittedEvent(queue, existing, known, ref.priority ?? existing.priority, ref.noBatch ?? existing.noBatch, ref.riskHint, facts.value ? targets : undefined);
          const decidedHere = await runner.dispatch(queue.id, submitted);
          return succeed({ queue, entry: await entryAfter(existing, decidedHere) });
        }
      });
    },

    cancel(ref: PullRequestRef): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord }>> {
      return oneAtATime(ref, async () => {
        const found = await findEntry(ref);
        if (!found.ok) return found;
        const { entry } = found.value;
        // A submission of the PR may wait for its decision in the inbox (sent to a replica that is not the writer, or
        // its round failed), the stored state not telling (ended, or as claimed): the cancel is for it, decided after
        // it. Handed to the writer, it could be decided first, and be lost: the PR queued after a 200.
        const waiting = await runner.waitingSubmission(entry.queueId, entry.id);
        if (waiting === null && entry.state === 'CANCELLED') return found; // Cancelling twice is a no-op, so clients may retry.
        if (waiting === null && isTerminal(entry.state)) {
          return invalid(`Pull request #${ref.prNumber} is not in the queue: it is already ${entry.state}.`);
        }
        const decidedHere = await runner.dispatch(entry.queueId, { type: 'cancel_requested', entryId: entry.id, prNumber: entry.prNumber }, waiting === null ? {} : { after: waiting });
        return succeed({ queue: found.value.queue, entry: await entryAfter(entry, decidedHere) });
      });
    },

    restart(ref: PullRequestRef, requestId?: string): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord }>> {
      return oneAtATime(ref, async () => {
        const found = await findEntry(ref);
        if (!found.ok) return found;
        const { entry } = found.value;
        if (entry.state !== 'TESTING' && entry.state !== 'PENDING_FAILURE') {
          return invalid(
            `Tests of pull request #${ref.prNumber} can only be restarted while it is TESTING or PENDING_FAILURE; it is ${entry.state}.`,
          );
        }
        // The engine re-runs the same content in the same place; the runner records the request in the timeline.
        const decidedHere = await runner.dispatch(entry.queueId, { type: 'restart_requested', entryId: entry.id, ...(requestId !== undefined ? { requestId } : {}) });
        return succeed({ queue: found.value.queue, entry: await entryAfter(entry, decidedHere) });
      });
    },

    setImpactedTargets(input: ImpactedTargetsUpload): Promise<Outcome<{ queue: QueueRecord; entry: QueueEntryRecord | null; count: number | 'ALL' }>> {
      // One at a time with the PR's submits: an upload racing a submit is either read by it or finds its entry
      // decided (else the submit could read no targets and the upload find no entry to tell). Across replicas the
      // race stays open for the moment between the two; the engine then keeps the targets the submit read.
      return oneAtATime(input, () => storeTargets(input));
    },
  };
}

type SubmittedEvent = Extract<EngineEvent, { type: 'submitted' }>;

/** A PR head's impacted targets, as CI uploads them. */
export interface ImpactedTargetsUpload extends PullRequestRef {
  sha: string;
  targets: string[] | 'ALL';
}

export type PullRequestService = ReturnType<typeof pullRequestService>;
