import { DEFAULT_QUEUE_CONFIG, withSettings, type QueueConfig, type QueueMode } from '../domain/queue-config.js';
import type { QueueFileSource, QueueRecord } from '../domain/records.js';
import { repoKey, type RepoRef } from '../domain/repo.js';
import type { Stores } from '../ports/stores.js';
import type { GitHostRegistry } from '../ports/git-host.js';
import type { UpdateQueueRequest } from '../api/schemas/queue.js';
import { KeyedMutex } from '../concurrency/keyed-mutex.js';
import type { QueueRunner } from '../runner/queue-runner.js';
import { conflict, invalid, notFound, succeed, type Outcome } from './outcome.js';

export function describeQueue(repo: RepoRef, targetBranch: string): string {
  return `${repo.owner}/${repo.name}@${targetBranch} on ${repo.host}`;
}

/** The 404 of a queue that does not exist. */
export function noQueue(repo: RepoRef, targetBranch: string): Outcome<never> {
  return notFound(`No queue exists for ${describeQueue(repo, targetBranch)}.`);
}

/** The queue for this repository and branch, or a 404 naming it. */
export async function findQueue(stores: Stores, repo: RepoRef, targetBranch: string, options?: { maxAgeMs?: number }): Promise<Outcome<QueueRecord>> {
  const queue = await stores.queues.find(repo, targetBranch, options);
  return queue ? succeed(queue) : noQueue(repo, targetBranch);
}

/** Creating, reading, reconfiguring and deleting queues. */
export function queueService(stores: Stores, runner: QueueRunner, hosts: GitHostRegistry, now: () => Date = () => new Date()) {
  // An update reads the config, merges the change and writes the whole config back:
  // run one update per queue at a time, or concurrent updates overwrite each other.
  // (Within this process only; several replicas would need a conditional write.)
  const updates = new KeyedMutex();

  /** Moves one queue to its repository's new name on the host, and has its runner reload the record. */
  async function moveQueue(queue: QueueRecord, to: RepoRef): Promise<boolean> {
    const moved = await updates.run(`${repoKey(queue.repo)}\n${queue.targetBranch}`, () => stores.queues.moveToRepository(queue.id, to, now()));
    if (moved.ok) await runner.dispatch(queue.id, { type: 'config_changed', config: moved.value.config, requestedState: moved.value.requestedState });
    return moved.ok;
  }

  async function updateNow(input: UpdateQueueRequest, fromFile?: QueueFileSource): Promise<Outcome<QueueRecord>> {
    const found = await findQueue(stores, input.repo, input.targetBranch);
    if (!found.ok) return found;
    const queue = found.value;
    if (input.requiredStatuses !== undefined && input.deleteRequiredStatuses) {
      return invalid('Give either requiredStatuses or deleteRequiredStatuses, not both.');
    }
    const { repo: _repo, targetBranch: _branch, state, requiredStatuses, deleteRequiredStatuses, ...settings } = input;
    const named = [...Object.keys(settings).filter((key) => (settings as Record<string, unknown>)[key] !== undefined), ...(requiredStatuses !== undefined || deleteRequiredStatuses ? ['requiredStatuses'] : [])];
    // Settings wait for the switch to end; pausing, draining and resuming do not (an operator stops a queue at any time).
    if (queue.modeSwitchStartedAt && (named.length > 0 || fromFile)) {
      return conflict(`The queue for ${describeQueue(queue.repo, queue.targetBranch)} is SWITCHING_MODES; change its settings once the old mode's runs end (a run that passed while the queue is paused lands once it runs again); pausing, draining and resuming work now.`);
    }
    // The repository's file wins: settings it configures change there, reviewed like code.
    if (queue.configFile && !fromFile && named.length > 0) {
      const { path, commitSha } = queue.configFile;
      return conflict(
        `The queue for ${describeQueue(queue.repo, queue.targetBranch)} is configured by ${path} (commit ${commitSha.slice(0, 7)}): change ${named.map((k) => `\`${k}\``).join(', ')} there. updateQueue can still pause, drain or resume it.`,
      );
    }
    // A file says the whole configuration: what it leaves out takes the default.
    const config = withSettings(fromFile ? DEFAULT_QUEUE_CONFIG : queue.config, { ...settings, ...(requiredStatuses !== undefined ? { requiredStatuses } : {}) });
    if (deleteRequiredStatuses) delete config.requiredStatuses;

    const updated = await stores.queues.update(queue.id, {
      config,
      ...(state ? { requestedState: state } : {}),
      ...(fromFile ? { configFile: fromFile } : {}),
      updatedAt: now(),
    });
    if (!updated) return noQueue(input.repo, input.targetBranch);
    // The engine decides what the change means for runs in flight (a mode change may
    // put the queue in SWITCHING_MODES); the queue record is read back after it.
    await runner.dispatch(queue.id, { type: 'config_changed', config: updated.config, requestedState: updated.requestedState });
    return succeed((await stores.queues.findById(queue.id)) ?? updated);
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
      // A host that answers from this service's database tells the branch's head now, so the
      // first PR can start at once; a remote host is asked by the runner in the background.
      const host = hosts.forHost(input.repo.host);
      const head = host?.answersLocally ? await host.readBranchHead(input.repo, input.targetBranch).catch(() => null) : null;
      if (head) await runner.dispatch(inserted.value.id, { type: 'base_moved', sha: head });
      else runner.kick(inserted.value.id);
      return succeed(inserted.value);
    },

    /** `fromFile`: the settings come from the repository's queue file (the whole configuration; the queue is then the file's). */
    update(input: UpdateQueueRequest, fromFile?: QueueFileSource): Promise<Outcome<QueueRecord>> {
      return updates.run(`${repoKey(input.repo)}\n${input.targetBranch}`, () => updateNow(input, fromFile));
    },

    /** The file no longer names this queue: updateQueue configures it again, from the settings it has. */
    async releaseFromFile(queue: QueueRecord): Promise<void> {
      await updates.run(`${repoKey(queue.repo)}\n${queue.targetBranch}`, () => stores.queues.update(queue.id, { configFile: null, updatedAt: now() }));
    },

    /**
     * The repository was renamed or transferred on its host (GitHub's `repository` event): its queues follow, so the
     * webhooks, which name it by its new name, find them again (found by review: they found none, so a label taken off
     * changed nothing and a second queue could be made for the same branch). The runner reloads the record. A queue the
     * new name already has for a branch is left as it is, and the old one with it (said in the answer).
     */
    async moveRepository(from: RepoRef, to: RepoRef): Promise<Array<{ targetBranch: string; moved: boolean }>> {
      const results: Array<{ targetBranch: string; moved: boolean }> = [];
      for (const queue of await stores.queues.listForOrg(from.host, from.owner, from)) results.push({ targetBranch: queue.targetBranch, moved: await moveQueue(queue, to) });
      return results;
    },

    /**
     * The host's webhooks name the repository `repo`, whose id on the host is `hostRepoId`: queues known by that id under
     * another name follow it (a rename or transfer whose own event never came: an App registered before it subscribed
     * to it, or two renames handled out of order), and queues under this name learn the id.
     */
    async followRepository(repo: RepoRef, hostRepoId: string, currentName: () => Promise<RepoRef | null>): Promise<void> {
      const elsewhere = (await stores.queues.listByHostRepoId(repo.host, hostRepoId)).filter((q) => repoKey(q.repo) !== repoKey(repo));
      // The event may be old (a delivery retried, or redelivered days later, names the repository as it was then):
      // the host says where the repository is now, and only that moves a queue (found by review: a late event moved
      // the queues back to the old name).
      const now_ = elsewhere.length > 0 ? await currentName() : null;
      for (const queue of elsewhere) {
        if (!now_ || repoKey(queue.repo) === repoKey(now_)) continue;
        await moveQueue(queue, now_);
      }
      // Learnt where unknown only: a queue holding another id is another repository's that once had this name (found
      // by review: a new repository under a renamed one's old name took over its queues' id).
      for (const queue of await stores.queues.listForOrg(repo.host, repo.owner, repo)) {
        if (queue.hostRepoId === null || queue.hostRepoId === undefined) await stores.queues.setHostRepoId(queue.id, hostRepoId);
      }
    },


    async delete(input: { repo: RepoRef; targetBranch: string }): Promise<Outcome<QueueRecord>> {
      const found = await findQueue(stores, input.repo, input.targetBranch);
      if (!found.ok) return found;
      const queue = found.value;
      const named = describeQueue(input.repo, input.targetBranch);
      // A queue a file configures may be deleted too: its repository may be gone, or the App uninstalled, so that no push
      // would ever hand it back (found by review, which undid a refusal here). Created again through the API, it follows
      // the API until the file's next push on the default branch.
      return runner.retire(queue.id, async (waiting): Promise<Outcome<QueueRecord>> => {
        // A submission answered and not decided yet is in the queue too (deleted, it would be lost after its 200): a
        // first one holds a claim, a new attempt of an ended PR only its input (waiting). Claims are read before the
        // entries: another replica's writer may decide one between the two reads, and is then seen by the second.
        const undecided = [...new Set([...(await stores.entries.undecidedSubmissions(queue.id)), ...waiting])].sort((a, b) => a - b);
        const enqueued = await stores.entries.countEnqueued(queue.id);
        if (enqueued > 0) return conflict(`The queue for ${named} still holds ${enqueued} enqueued pull request(s); cancel or merge them first.`);
        if (undecided.length > 0) {
          return conflict(
            `The queue for ${named} has submissions waiting for a decision (${undecided.map((n) => `#${n}`).join(', ')}): try again in a moment, or cancel them (one whose request failed waits until then).`,
          );
        }
        await stores.queues.delete(queue.id);
        return succeed(queue);
      });
    },
  };
}

export type QueueService = ReturnType<typeof queueService>;
