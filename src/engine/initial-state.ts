import { DEFAULT_QUEUE_CONFIG, withSettings, type QueueConfig } from '../domain/queue-config.js';
import type { EngineState } from './model.js';

/** A new, empty queue. */
export function initialEngineState(targetBranch: string, config: Partial<QueueConfig> = {}, baseSha: string | null = null): EngineState {
  return {
    targetBranch,
    config: withSettings(DEFAULT_QUEUE_CONFIG, config),
    requestedState: 'RUNNING',
    switchingToMode: null,
    baseSha,
    knownBases: {},
    entries: [],
    runs: [],
    nextRunSeq: 1,
    mergingRunId: null,
    recentOutcomes: [],
    nextEventSeq: 1,
    hostOutage: null,
  };
}
