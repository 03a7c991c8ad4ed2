import type { QueueConfig } from '../src/domain/queue-config.js';
import type { WorkloadSpec } from '../src/simulation/workload.js';

/** A benchmark workload and the settings a user of our queue would choose for it. */
export interface BenchWorkload {
  spec: WorkloadSpec;
  /** Settings tuned for this workload (the 'ours-tuned' row); 'ours' runs DEFAULT_ROW everywhere. */
  tuned: Partial<QueueConfig>;
  /** Whether the repository's independent target groups are usable by designs that have lanes. */
  lanes: boolean;
  /**
   * Separations of the risk signal (workload.ts riskSeparation) at which 'ours' also runs
   * on the same PRs and breakage: what better hints would be worth there.
   */
  hintStudy?: number[];
}

/** CI capacity every strategy gets: runs at once, where its design can use them. */
export const CI_CAPACITY = 4;

/**
 * The 'ours' row: one configuration, the same in every workload, otherwise the
 * queue's defaults (tuning: adaptive). What a user must tell us: the CI capacity,
 * a test timeout above their longest CI (the default 60 minutes would time out
 * every run of (f)'s 2-hour CI), and that CI reports impacted targets (parallel
 * mode: with one target group, as in (a), it tests exactly like a single queue).
 */
export const DEFAULT_ROW: Partial<QueueConfig> = { mode: 'parallel', concurrency: CI_CAPACITY, testingTimeoutMinutes: 240 };
const CI_MINUTES = 30;
/** One run at a time merges 60/30 = 2 PRs an hour: "serial capacity". */
const SERIAL_PER_HOUR = 60 / CI_MINUTES;
/** CI of (f): two hours, so serial capacity is half a PR an hour. */
const LONG_CI_MINUTES = 120;

const base: Omit<WorkloadSpec, 'name' | 'description' | 'breakRate'> = {
  prCount: 500,
  arrivalsPerHour: 4 * SERIAL_PER_HOUR,
  runFlakeRate: 0.02,
  ci: { meanMinutes: CI_MINUTES, jitterMinutes: 5 },
  targetGroups: 1,
  conflictRate: 0,
  mergeMinutes: 0.25,
};

/**
 * The 'ours-tuned' settings: the best of a grid of what a user can set
 * (bench/queue-tune.ts), ranked by mean p95 time in queue on seeds 6, 7 and 8,
 * never on the reported seeds 1 to 5. Always four runs at once and a run
 * timeout well above CI's longest run (35 minutes; 140 in (f)).
 */
const four: Partial<QueueConfig> = { concurrency: CI_CAPACITY, testingTimeoutMinutes: 60 };

/**
 * At 30% breakage one PR per run wins: most batches would fail. A failure is
 * decided as soon as the runs ahead pass. First on seeds 6-8 (p95 2156 min);
 * the same with optimistic merging second (2229).
 */
const breaky: Partial<QueueConfig> = { ...four, mode: 'single', batch: false, pendingFailureDepth: 0, canOptimisticallyMerge: false };

/**
 * At 10% breakage, small batches (the engine sizes them to about 1/(c·p), so 2-3)
 * gathered for up to 30 minutes, split four ways at once when one fails.
 * First on seeds 6-8 in (a) and in (e), the morning burst (p95 838 min there).
 */
const batchedBreaky: Partial<QueueConfig> = {
  ...four,
  mode: 'single',
  batch: true,
  batchingMinSize: 3,
  batchingMaxWaitTimeMinutes: 30,
  bisectionConcurrency: 4,
  pendingFailureDepth: 0,
  canOptimisticallyMerge: false,
};

/**
 * At 2% breakage batches pay: started at once when a slot frees, split four ways
 * when one fails. First on seeds 6-8 (p95 82 min); batches of 3 gathered for 30
 * minutes came second (90 min) with half the CI runs.
 */
const healthy: Partial<QueueConfig> = { ...batchedBreaky, batchingMinSize: 1, batchingMaxWaitTimeMinutes: 0 };

/**
 * Lanes batch within themselves (as (a) batches its single line), a failed batch bisected
 * inside its lane. Chosen on seeds 6 to 8 among batches of 1, 2 (15 min wait) and 3
 * (30 min): the fewest CI runs per merged PR and the most merged per hour. (The whole
 * grid ranked by p95 puts batches of 1 first: 121 min, but 1.13 runs per merged PR.)
 */
const monorepo: Partial<QueueConfig> = { ...batchedBreaky, mode: 'parallel' };

/**
 * Two-hour CI: batches of 3 gathered for only 10 minutes, the wait being short
 * beside a run. First on seeds 6-8 (p95 1121 min); the timeout covers runs of 140.
 */
const longCi: Partial<QueueConfig> = { ...batchedBreaky, batchingMaxWaitTimeMinutes: 10, testingTimeoutMinutes: 240 };

/**
 * One run in ten fails spuriously: batches of 3 gathered for 10 minutes, and a
 * later passing run that contains a failed PR proves it a flake. First on seeds
 * 6-8 (p95 500 min).
 */
const flaky: Partial<QueueConfig> = { ...batchedBreaky, batchingMaxWaitTimeMinutes: 10, canOptimisticallyMerge: true };

export const WORKLOADS: BenchWorkload[] = [
  {
    spec: { ...base, name: 'a', description: '500 PRs at 4x serial capacity (8/h), CI 30±5 min, 10% break, 2% flaky runs', breakRate: 0.1 },
    tuned: batchedBreaky,
    lanes: false,
    // Where the goal of a p95 within 3x the oracle's is missed with the stream's own hints (r ≈ 0.5).
    hintStudy: [2, 2.5, 3],
  },
  {
    spec: { ...base, name: 'b', description: 'as (a) with 2% breaking', breakRate: 0.02 },
    tuned: healthy,
    lanes: false,
  },
  {
    spec: { ...base, name: 'c', description: 'as (a) in a monorepo: 4 independent target groups, each PR touches one', breakRate: 0.1, targetGroups: 4 },
    tuned: monorepo,
    lanes: true,
  },
  {
    spec: { ...base, name: 'd', description: 'as (a) with 30% breaking', breakRate: 0.3 },
    tuned: breaky,
    lanes: false,
  },
  {
    // 8/h over the day: 48/h for the two morning hours, about 4.4/h for the other 22.
    spec: { ...base, name: 'e', description: 'as (a) with a morning burst: half of each day\'s PRs (8/h on average) arrive in a 2-hour window', breakRate: 0.1, morningBurst: { hours: 2, share: 0.5 } },
    tuned: batchedBreaky,
    lanes: false,
  },
  {
    spec: {
      ...base,
      name: 'f',
      description: 'as (a) with 2-hour CI (120±20 min), arrivals again at 4x serial capacity (2/h)',
      breakRate: 0.1,
      arrivalsPerHour: 4 * (60 / LONG_CI_MINUTES),
      ci: { meanMinutes: LONG_CI_MINUTES, jitterMinutes: 20 },
    },
    tuned: longCi,
    lanes: false,
  },
  {
    spec: { ...base, name: 'g', description: 'as (a) with 10% flaky runs', breakRate: 0.1, runFlakeRate: 0.1 },
    tuned: flaky,
    lanes: false,
  },
];
