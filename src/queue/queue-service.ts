import { IN_FLIGHT_STATES } from '../domain/pull-request-state.js';
import { DEFAULT_QUEUE_CONFIG, type QueueConfig, type QueueMode } from '../domain/queue-config.js';
import type { QueueRecord } from '../domain/records.js';
import { repoKey, type RepoRef } from '../domain/repo.js';
import type { Stores } from '../ports/stores.js';
import type { UpdateQueueRequest } from '../api/schemas/queue.js';
import { conflict, invalid, notFound, succeed, type Outcome } from './outcome.js';

export function describeQueue(repo: RepoRef, targetBranch: string): string {
  return `${repo.owner}/${repo.name}@${targetBranch} on ${repo.host}`;
}

/** The queue for this repository and branch, or a 404 naming it. */
export async function findQueue(stores: Stores, repo: RepoRef, targetBranch: string): Promise<Outcome<QueueRecord>> {
  const queue = await stores.queues.find(repo, targetBranch);
  return queue ? succeed(queue) : notFound(`No queue exists for ${describeQueue(repo, targetBranch)}.`);
}

/** Creating, reading, reconfiguring and deleting queues. */
export function queueService(stores: Stores, now: () => Date = () => new Date()) {
  // An update reads the config, merges the change and writes the whole config back:
  // run one update per queue at a time, or concurrent updates overwrite each other.
  // (Within this process only; several replicas would need a conditional write.)
  const pending = new Map<string, Promise<unknown>>();
  async function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
    const run = (pending.get(key) ?? Promise.resolve()).then(work, work);
    const settled = run.catch(() => undefined);
    pending.set(key, settled);
    try {
      return await run;
    } finally {
      if (pending.get(key) === settled) pending.delete(key);
    }
  }

  async function updateNow(input: UpdateQueueRequest): Promise<Outcome<QueueRecord>> {
    const found = await findQueue(stores, input.repo, input.targetBranch);
    if (!found.ok) return found;
    const queue = found.value;
    if (queue.modeSwitchStartedAt) {
      return conflict(`The queue for ${describeQueue(queue.repo, queue.targetBranch)} is SWITCHING_MODES; change it again once its in-flight tests end.`);
    }
    if (input.requiredStatuses !== undefined && input.deleteRequiredStatuses) {
      return invalid('Give either requiredStatuses or deleteRequiredStatuses, not both.');
    }
    const { repo: _repo, targetBranch: _branch, state, requiredStatuses, deleteRequiredStatuses, ...settings } = input;
    const config: QueueConfig = { ...queue.config };
    for (const [key, value] of Object.entries(settings)) {
      if (value !== undefined) (config as unknown as Record<string, unknown>)[key] = value;
    }
    if (requiredStatuses !== undefined) config.requiredStatuses = [...new Set(requiredStatuses)];
    if (deleteRequiredStatuses) delete config.requiredStatuses;

    let modeSwitchStartedAt: Date | null | undefined;
    if (config.mode !== queue.config.mode) {
      // Runs in flight were built for the old mode: let them end before the new one starts.
      const inFlight = await stores.entries.countInStates(queue.id, IN_FLIGHT_STATES);
      if (inFlight > 0) modeSwitchStartedAt = now();
    }
    const updated = await stores.queues.update(queue.id, {
      config,
      ...(state ? { requestedState: state } : {}),
      ...(modeSwitchStartedAt ? { modeSwitchStartedAt } : {}),
      updatedAt: now(),
    });
    return updated ? succeed(updated) : notFound(`No queue exists for ${describeQueue(input.repo, input.targetBranch)}.`);
  }

  return {
    async create(input: { repo: RepoRef; targetBranch: string; mode?: QueueMode; concurrency?: number }): Promise<Outcome<QueueRecord>> {
      const at = now();
      const config: QueueConfig = {
        ...DEFAULT_QUEUE_CONFIG,
        mode: input.mode ?? DEFAULT_QUEUE_CONFIG.mode,
        concurrency: input.concurrency ?? DEFAULT_QUEUE_CONFIG.concurrency,
      };
      const inserted = await stores.queues.insert({
        repo: input.repo,
        targetBranch: input.targetBranch,
        config,
        requestedState: 'RUNNING',
        modeSwitchStartedAt: null,
        createdAt: at,
        updatedAt: at,
      });
      if (!inserted.ok) return conflict(`A queue already exists for ${describeQueue(input.repo, input.targetBranch)}.`);
      return succeed(inserted.value);
    },

    update(input: UpdateQueueRequest): Promise<Outcome<QueueRecord>> {
      return oneAtATime(`${repoKey(input.repo)}\n${input.targetBranch}`, () => updateNow(input));
    },

    async delete(input: { repo: RepoRef; targetBranch: string }): Promise<Outcome<QueueRecord>> {
      const found = await findQueue(stores, input.repo, input.targetBranch);
      if (!found.ok) return found;
      const enqueued = await stores.entries.countEnqueued(found.value.id);
      if (enqueued > 0) {
        return conflict(
          `The queue for ${describeQueue(input.repo, input.targetBranch)} still holds ${enqueued} enqueued pull request(s); cancel or merge them first.`,
        );
      }
      await stores.queues.delete(found.value.id);
      return succeed(found.value);
    },
  };
}

export type QueueService = ReturnType<typeof queueService>;
