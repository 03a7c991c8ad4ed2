import { isDeepStrictEqual } from 'node:util';
import { DEFAULT_QUEUE_CONFIG, withSettings } from '../domain/queue-config.js';
import type { RepoRef } from '../domain/repo.js';
import type { Stores } from '../ports/stores.js';
import type { QueueService } from '../queue/queue-service.js';
import type { QueueFile } from './queue-file-schema.js';

/** What applying the file did to one queue. */
export interface QueueFileChange {
  targetBranch: string;
  /** `released`: the file no longer names it, updateQueue configures it again; `refused`: left as it was; `unchanged`: already so. */
  result: 'created' | 'updated' | 'unchanged' | 'released' | 'refused';
  message?: string;
}

/**
 * Makes a repository's queues what its file says: each queue the file names is
 * created if missing and given exactly the file's settings (defaults for what it
 * leaves out), marked as the file's; queues the file stopped naming are handed
 * back to updateQueue with the settings they have (never deleted: PRs may wait in
 * them). `file` null: the file is gone, every queue is handed back.
 */
export async function applyQueueFile(
  deps: { stores: Stores; queues: QueueService; now?: () => Date },
  repo: RepoRef,
  file: QueueFile | null,
  source: { path: string; commitSha: string },
): Promise<QueueFileChange[]> {
  const now = deps.now ?? (() => new Date());
  const changes: QueueFileChange[] = [];
  const named = Object.entries(file?.queues ?? {});
  for (const [targetBranch, settings] of named) {
    let created = false;
    const existing = await deps.stores.queues.find(repo, targetBranch);
    // Already the file's, with these settings: nothing to tell the runner (a config change would also lift a blocked landing).
    if (existing?.configFile && isDeepStrictEqual(existing.config, withSettings(DEFAULT_QUEUE_CONFIG, settings ?? {}))) {
      changes.push({ targetBranch, result: 'unchanged' });
      continue;
    }
    if (!existing) {
      const made = await deps.queues.create({ repo, targetBranch });
      // Another delivery may have created it a moment ago: then it is updated like any other.
      created = made.ok;
    }
    const updated = await deps.queues.update({ repo, targetBranch, ...(settings ?? {}) }, { ...source, appliedAt: now() });
    changes.push(updated.ok ? { targetBranch, result: created ? 'created' : 'updated' } : { targetBranch, result: 'refused', message: updated.failure.message });
  }
  const stillNamed = new Set(named.map(([branch]) => branch));
  for (const queue of await deps.stores.queues.listForOrg(repo.host, repo.owner, repo)) {
    if (!queue.configFile || stillNamed.has(queue.targetBranch)) continue;
    await deps.queues.releaseFromFile(queue);
    changes.push({ targetBranch: queue.targetBranch, result: 'released' });
  }
  return changes;
}
