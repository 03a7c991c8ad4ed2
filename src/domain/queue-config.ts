/** How a queue tests and merges: every setting `updateQueue` accepts, with its default. */
export const QUEUE_MODES = ['single', 'parallel'] as const;
export type QueueMode = (typeof QUEUE_MODES)[number];

export const MERGE_METHODS = ['merge_commit', 'squash', 'rebase'] as const;
export type MergeMethod = (typeof MERGE_METHODS)[number];

export const DIRECT_MERGE_MODES = ['off', 'always'] as const;
export type DirectMergeMode = (typeof DIRECT_MERGE_MODES)[number];

export const TUNINGS = ['adaptive', 'fixed'] as const;
export type Tuning = (typeof TUNINGS)[number];

/** The settings `tuning: adaptive` chooses by itself: giving any of them fixes them all. */
export const TUNED_SETTINGS = ['batch', 'batchingMinSize', 'batchingMaxWaitTimeMinutes', 'bisectionConcurrency', 'pendingFailureDepth', 'canOptimisticallyMerge'] as const;

export const MAX_UINT32 = 4294967295;

export interface QueueConfig {
  mode: QueueMode;
  /** Test runs in flight at once. */
  concurrency: number;
  /** Test several PRs together in one run. */
  batch: boolean;
  /** Smallest batch worth starting before the wait time is up. */
  batchingMinSize: number;
  /** How long a partial batch waits for more PRs; 0 = start at once. */
  batchingMaxWaitTimeMinutes: number;
  /** Runs in flight while bisecting a failed batch. */
  bisectionConcurrency: number;
  /** How many runs behind a failure to wait for before deciding it. */
  pendingFailureDepth: number;
  /** A later passing run that contains a failed PR proves it (flake tolerance). */
  canOptimisticallyMerge: boolean;
  testingTimeoutMinutes: number;
  mergeMethod: MergeMethod;
  /** Checks that must pass; absent = the branch's protection or rulesets decide. */
  requiredStatuses?: string[];
  commentsEnabled: boolean;
  commandsEnabled: boolean;
  statusCheckEnabled: boolean;
  enqueueingLabel: string;
  createPrsForTestingBranches: boolean;
  directMergeMode: DirectMergeMode;
  /**
   * `adaptive`: the engine chooses batch size, bisection and failure handling
   * (it never waits to fill a batch) from the queue's observed break rate, within `concurrency`
   * (the settings in TUNED_SETTINGS are then not used); `fixed`: they are used
   * as given. Absent in queues stored before it existed: fixed, as they were.
   */
  tuning?: Tuning;
  /**
   * Minutes a running queue may go without progress (a run started or finished,
   * a PR merged or ejected) while PRs wait before it reports itself stalled
   * (queue.stalled, a problem in getQueue, a metric); 0 turns the alert off.
   * Absent in queues stored before it existed: the default.
   */
  stallAlertMinutes?: number;
  /**
   * Flake tolerance: a PR whose own run failed its checks is tested again this
   * many times before it is ejected (each retry is on its timeline). Absent in
   * queues stored before it existed: 0.
   */
  retryFailedTests?: number;
  /**
   * Bot accounts (`dependabot[bot]`, `renovate[bot]`) whose label changes count as a writer's. GitHub cannot say a bot
   * has write access (it is no collaborator), so without this no bot's label queued a PR; the repository's writers
   * name the ones they trust. Absent in queues stored before it existed: none.
   */
  labelingBots?: string[];
}

/** The default stall alert: past the default test timeout, so one long run alone never looks stalled. */
export const DEFAULT_STALL_ALERT_MINUTES = 90;

/** A stored config with what queues stored before a setting existed take for it (as the queue record reads them). */
export function withStoredDefaults(config: QueueConfig): QueueConfig {
  return { ...config, stallAlertMinutes: config.stallAlertMinutes ?? DEFAULT_STALL_ALERT_MINUTES, retryFailedTests: config.retryFailedTests ?? 0, tuning: config.tuning ?? 'fixed', labelingBots: config.labelingBots ?? [] };
}

/**
 * `base` with every setting given (undefined: unchanged); required statuses
 * without repeats. Giving a setting adaptive tuning would choose, without
 * naming the tuning, fixes the tuning: what the operator set is what runs.
 */
export function withSettings(base: Readonly<QueueConfig>, settings: Partial<QueueConfig>): QueueConfig {
  const config: QueueConfig = { ...base };
  for (const [key, value] of Object.entries(settings)) if (value !== undefined) (config as unknown as Record<string, unknown>)[key] = value;
  if (settings.tuning === undefined && TUNED_SETTINGS.some((key) => settings[key] !== undefined)) config.tuning = 'fixed';
  if (settings.requiredStatuses) config.requiredStatuses = [...new Set(settings.requiredStatuses)];
  return config;
}

export const DEFAULT_QUEUE_CONFIG: Readonly<QueueConfig> = Object.freeze({
  mode: 'single',
  concurrency: 1,
  batch: false,
  batchingMinSize: 1,
  batchingMaxWaitTimeMinutes: 0,
  bisectionConcurrency: 1,
  pendingFailureDepth: 0,
  canOptimisticallyMerge: false,
  testingTimeoutMinutes: 60,
  mergeMethod: 'squash',
  commentsEnabled: true,
  commandsEnabled: true,
  statusCheckEnabled: true,
  enqueueingLabel: 'merge-queue',
  createPrsForTestingBranches: false,
  directMergeMode: 'off',
  tuning: 'adaptive',
  stallAlertMinutes: DEFAULT_STALL_ALERT_MINUTES,
  retryFailedTests: 0,
  labelingBots: Object.freeze([]) as unknown as string[],
});
