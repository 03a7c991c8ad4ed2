import type { EngineState } from './model.js';

/** Prior belief about how often a PR breaks the build, before the queue has seen any. */
const PRIOR_FAILURE_RATE = 0.1;
const PRIOR_WEIGHT = 10;
const MAX_BATCH = 16;

/**
 * How many PRs one batch may hold. A batch of b PRs that each fail with
 * probability p passes with (1-p)^b, and a failed batch costs a bisection and
 * every speculative run behind it: with c runs in flight the chain holds about
 * c·b PRs, so b ≈ 1/(c·p) keeps the chain likely to pass (measured best in
 * bench/). p is learned from the queue's own recent outcomes, so a healthy
 * queue batches more and a broken one less.
 */
export function batchCapacity(state: EngineState): number {
  const { config } = state;
  if (!config.batch) return 1;
  const failures = state.recentOutcomes.reduce((sum, o) => sum + o, 0);
  const p = (failures + PRIOR_FAILURE_RATE * PRIOR_WEIGHT) / (state.recentOutcomes.length + PRIOR_WEIGHT);
  const adaptive = Math.round(1 / (config.concurrency * Math.max(p, 0.01)));
  return Math.max(config.batchingMinSize, Math.min(MAX_BATCH, Math.max(2, adaptive)));
}
