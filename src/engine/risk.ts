import type { DecisionContext } from './context.js';
import type { EngineEntry } from './model.js';
import { likelyToBreak, PLACES_PER_RUN, runOf } from './order.js';
import { expectedAhead } from './run-validity.js';

/**
 * Risk-aware speculation (issue 12): runs behind a PR predicted to break are
 * built without it (order.ts expectedToMerge), as Uber's SubmitQueue bets on
 * the likelier outcome. When such a PR passes after all, the bet lost: rather
 * than dropping every run built without it, it goes back in line behind them
 * and is tested once more on top. Its pass answers the prediction, so it is
 * never deferred twice, and makes it a safe PR (PROVEN_RISK).
 */
export function answerPredictions(ctx: DecisionContext): void {
  const { state } = ctx;
  for (const entry of state.entries) {
    if (!likelyToBreak(entry) || runOf(state, entry.id)?.status !== 'passed') continue;
    const deferred = builtWithout(ctx, entry);
    entry.risk = PROVEN_RISK;
    // After every place the runs so far gave out, before any run still to start.
    if (deferred) entry.place = (state.nextRunSeq - 1) * PLACES_PER_RUN + PLACES_PER_RUN - 1;
    ctx.entryChanged();
  }
}

/**
 * The risk of a PR whose own run passed though it was predicted to break: it
 * was just tested, so it is among the safest in line (not the queue's break
 * rate, which it had before), and batches take it with others; not 0, as the
 * branch under it may have moved since. On seeds 6-15, against the queue's
 * rate: mean p95 in queue (d) 753 → 624 min, (g) 210 → 202, (a) 150 → 140;
 * (b) 69 either way.
 */
export const PROVEN_RISK = 0.01;

/** Whether a run in flight or passed was built without this PR though it is ahead of that run's PRs. */
function builtWithout(ctx: DecisionContext, entry: EngineEntry): boolean {
  const order = ctx.order();
  return ctx.state.runs.some(
    (run) => run.id !== ctx.state.mergingRunId && run.status !== 'failed' && !run.ahead.some((h) => h.entryId === entry.id) && (expectedAhead(ctx, order, run, true) ?? []).includes(entry),
  );
}
