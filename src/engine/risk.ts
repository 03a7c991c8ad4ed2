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
 * never deferred twice.
 */
export function answerPredictions(ctx: DecisionContext): void {
  const { state } = ctx;
  for (const entry of state.entries) {
    if (!likelyToBreak(entry) || runOf(state, entry.id)?.status !== 'passed') continue;
    const deferred = builtWithout(ctx, entry);
    delete entry.risk;
    // After every place the runs so far gave out, before any run still to start.
    if (deferred) entry.place = (state.nextRunSeq - 1) * PLACES_PER_RUN + PLACES_PER_RUN - 1;
    ctx.entryChanged();
  }
}

/** Whether a run in flight or passed was built without this PR though it is ahead of that run's PRs. */
function builtWithout(ctx: DecisionContext, entry: EngineEntry): boolean {
  const order = ctx.order();
  return ctx.state.runs.some(
    (run) => run.id !== ctx.state.mergingRunId && run.status !== 'failed' && !run.ahead.some((h) => h.entryId === entry.id) && (expectedAhead(ctx, order, run, true) ?? []).includes(entry),
  );
}
