import type { EngineEntry, EngineState } from './model.js';
import { shrunkFailureRate } from './outcomes.js';

/**
 * How the engine tests and judges right now: batch size, how long a partial
 * batch waits (adaptive: never), how many ways a failed batch splits, and how
 * a failure is excused. With `tuning: fixed` these are the queue's settings as given; with
 * `tuning: adaptive` (new queues) the engine chooses them from what the queue
 * has seen, within `concurrency`, so one configuration fits a queue whose
 * failure rate moves.
 */
export interface Tuning {
  /** The queue's observed break rate (observedFailureRate). */
  breakRate: number;
  /** Most PRs one run may decide (1: no batches). */
  batchCapacity: number;
  /**
   * Adaptive only: the lowest chance of passing a batch may have, so PRs
   * predicted to be risky (EngineEntry.risk) fill it up faster and the safest
   * ones make bigger batches; null: batches are counted in PRs.
   */
  batchPassFloor: number | null;
  /** The batch size to expect (forecasts): the capacity, or what adaptive batches come to at the observed rate. */
  expectedBatchSize: number;
  /** Smallest batch worth starting before the wait is up. */
  batchingMinSize: number;
  batchingMaxWaitMinutes: number;
  /** Parts a failed batch is split into (fixed tuning; adaptive packs them by risk), and bisection runs at once. */
  bisectionConcurrency: number;
  pendingFailureDepth: number;
  canOptimisticallyMerge: boolean;
}

/** Prior belief about how often a PR breaks the build, before the queue has seen any. */
const PRIOR_FAILURE_RATE = 0.1;
const PRIOR_WEIGHT = 10;
const MAX_BATCH = 16;

/** The queue's recent break rate: ejected PRs among those concluded, pulled towards the prior while few are known. */
export function observedFailureRate(state: EngineState): number {
  return shrunkFailureRate(state.recentOutcomes, PRIOR_FAILURE_RATE, PRIOR_WEIGHT);
}

/**
 * A batch of b PRs that each fail with probability p passes with (1-p)^b, and a
 * failed batch costs a bisection and every speculative run behind it: with c
 * runs in flight the chain holds about c·b PRs, so b ≈ 1/(c·p) keeps the chain
 * likely to pass (measured best in bench/).
 */
function adaptiveBatchSize(concurrency: number, breakRate: number, floor: number): number {
  const size = Math.round(1 / (concurrency * Math.max(breakRate, 0.01)));
  return Math.min(MAX_BATCH, Math.max(floor, size));
}

/** The chance the engine gives a PR of breaking the build: its risk hint, else the queue's observed rate. */
export function breakChance(entry: EngineEntry, tuning: Tuning): number {
  return entry.risk ?? tuning.breakRate;
}

export function tuningOf(state: EngineState): Tuning {
  const { config } = state;
  const breakRate = observedFailureRate(state);
  if (config.tuning !== 'adaptive') {
    const capacity = config.batch ? Math.max(config.batchingMinSize, adaptiveBatchSize(config.concurrency, breakRate, 2)) : 1;
    return {
      breakRate,
      batchCapacity: capacity,
      batchPassFloor: null,
      expectedBatchSize: capacity,
      batchingMinSize: config.batchingMinSize,
      batchingMaxWaitMinutes: config.batchingMaxWaitTimeMinutes,
      bisectionConcurrency: config.bisectionConcurrency,
      pendingFailureDepth: config.pendingFailureDepth,
      canOptimisticallyMerge: config.canOptimisticallyMerge,
    };
  }
  // Adaptive: batches take the PRs waiting when a run can start, up to a chance of passing set by
  // the observed break rate, and never wait for more (waiting for a second PR, up to 30 minutes at
  // a 10 % break rate, gained nothing measurable on bench:queue's seeds 6-8 and delays a quiet
  // queue); a failed batch is split by its PRs' risks (failures.ts packParts), as many parts testing at a
  // time as runs may be in flight; a failure counts at once.
  const size = adaptiveBatchSize(config.concurrency, breakRate, 1);
  return {
    breakRate,
    batchCapacity: MAX_BATCH,
    // What a batch of the size the observed rate suggests would pass with.
    batchPassFloor: (1 - breakRate) ** size - 1e-9,
    expectedBatchSize: size,
    batchingMinSize: 1,
    batchingMaxWaitMinutes: 0,
    bisectionConcurrency: config.concurrency,
    pendingFailureDepth: 0,
    canOptimisticallyMerge: false,
  };
}
