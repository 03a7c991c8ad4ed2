import deepmerge from 'deepmerge';
import { TUNED_SETTINGS } from '../domain/queue-config.js';

type Config = Record<string, unknown>;

/**
 * A queue file merged with the files it `_extends` (the extended ones first), as Probot's context.config merges,
 * except that a list in a file replaces the extended one, and a queue's tuning follows what the later file says, as
 * updateQueue takes it (found by review: a repository choosing `tuning: adaptive` over an organisation's file that
 * fixed `batch` could no longer be read, and one setting `batch` over an adaptive base kept the base's tuning):
 * - a later file naming `tuning: adaptive` drops the batching and failure settings it inherits (the queue chooses them);
 * - a later file giving one of those settings without `tuning` drops the tuning it inherits (giving them fixes it).
 * What one file says itself is kept as it is, so a file contradicting itself is still refused.
 */
export function mergeQueueFiles(configs: readonly Config[]): Config {
  return configs.reduce<Config>((base, own) => {
    const merged = deepmerge(base, own, { arrayMerge: (_base, ownList: unknown[]) => ownList }) as Config;
    const ownQueues = own.queues;
    const queues = merged.queues;
    if (!isRecord(ownQueues) || !isRecord(queues)) return merged;
    for (const [branch, settings] of Object.entries(ownQueues)) {
      const queue = queues[branch];
      if (!isRecord(settings) || !isRecord(queue)) continue;
      if (typeof settings.tuning === 'string' && settings.tuning.toLowerCase() === 'adaptive') {
        for (const key of TUNED_SETTINGS) if (!(key in settings)) delete queue[key];
      } else if (settings.tuning === undefined && TUNED_SETTINGS.some((key) => key in settings)) {
        delete queue.tuning;
      }
    }
    return merged;
  }, {});
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
