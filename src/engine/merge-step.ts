import type { DecisionContext } from './context.js';
import { landingHeld } from './landing-block.js';
import type { EngineRun } from './model.js';
import { runOf } from './order.js';
import { expectedAhead, isValid } from './run-validity.js';
import { tuningOf } from './tuning.js';

/**
 * Merges the front of the queue when its run passed. With optimistic merging,
 * the deepest passing run merges everything it contains at once, PRs ahead
 * included: that content passed as exactly that content.
 */
export function merge(ctx: DecisionContext): void {
  const { state } = ctx;
  if (state.mergingRunId || state.requestedState === 'PAUSED' || !state.baseSha || state.hostOutage || landingHeld(state) || state.awaitingBaseHead) return;
  const order = ctx.order();
  const passed = state.runs.filter((r) => r.status === 'passed' && isValid(ctx, order, r)).sort((a, b) => a.seq - b.seq);
  let chosen: EngineRun | undefined;
  if (state.config.mode === 'parallel') {
    // Nothing of its lane may be undecided ahead of it: a PR it was built without lands
    // only after it, tested again on top (a lane's merges stay in its order).
    chosen = passed.find((r) => (expectedAhead(ctx, order, r, true) ?? [null]).length === 0);
  } else {
    const front = order[0];
    const frontRun = front ? runOf(state, front.id) : undefined;
    if (tuningOf(state).canOptimisticallyMerge) chosen = passed[passed.length - 1];
    else if (frontRun?.status === 'passed' && passed.includes(frontRun)) chosen = frontRun;
  }
  if (!chosen) return;
  state.mergingRunId = chosen.id;
  const entryIds = [...chosen.ahead, ...chosen.unit].map((h) => h.entryId).filter((id) => ctx.entry(id));
  ctx.actions.push({ type: 'merge', runId: chosen.id, entryIds, expectedBaseSha: state.baseSha });
}
