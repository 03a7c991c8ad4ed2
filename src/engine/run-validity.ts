import { headOf, normalizeBase, runContent, sameContent, token } from './content.js';
import type { DecisionContext } from './context.js';
import type { EngineEntry, EngineRun } from './model.js';
import { aheadOf, headsOf } from './order.js';

/** Where a run's unit stands in the queue, and what it must be tested on. */
export function expectedAhead(ctx: DecisionContext, order: EngineEntry[], run: EngineRun, undecidedToo = false): EngineEntry[] | null {
  const unit = run.unit.map((h) => ctx.entry(h.entryId));
  if (unit.some((e) => !e)) return null;
  const index = order.indexOf(unit[0] as EngineEntry);
  if (index < 0) return null;
  return aheadOf(ctx.state, order, index, unit as EngineEntry[], undecidedToo);
}

/** Whether a run still tests what the queue would test now. */
export function isValid(ctx: DecisionContext, order: EngineEntry[], run: EngineRun): boolean {
  const { state } = ctx;
  if (!state.baseSha) return false;
  const ahead = expectedAhead(ctx, order, run);
  if (!ahead) return false;
  const units = run.unit.map((h) => token(h));
  const currentUnit = run.unit.map((h) => token(headOf(ctx.entry(h.entryId) as EngineEntry)));
  if (units.join() !== currentUnit.join()) return false;
  const current = normalizeBase(state, state.baseSha);
  if (state.config.mode === 'single') {
    return sameContent(runContent(state, run), { root: current.root, heads: [...current.heads, ...headsOf(ahead).map(token), ...units] });
  }
  // Parallel on a branch that takes only tested commits: exactly the head and its lane ahead, as a single queue's run.
  if (state.landsOnlyTested) return sameContent(runContent(state, run), { root: current.root, heads: [...current.heads, ...headsOf(ahead).map(token), ...units] });
  // Parallel: the same lane on the same root; merges of other lanes do not matter.
  const runBase = normalizeBase(state, run.baseSha);
  if (runBase.root !== current.root || runBase.heads.some((h) => !current.heads.includes(h))) return false;
  const unmergedAhead = run.ahead.map(token).filter((t) => !current.heads.includes(t));
  return unmergedAhead.join() === headsOf(ahead).map(token).join();
}

/**
 * Drops runs that no longer test what the queue would test now, one at a time:
 * each drop moves PRs in the order, which may invalidate the runs behind them.
 */
export function reconcile(ctx: DecisionContext): void {
  for (;;) {
    const order = ctx.order();
    const invalid = ctx.state.runs
      .filter((run) => run.id !== ctx.state.mergingRunId) // Its merge decides it.
      .sort((a, b) => a.seq - b.seq)
      .find((run) => !isValid(ctx, order, run));
    if (!invalid) return;
    ctx.dropRun(invalid, whyInvalid(ctx, order, invalid));
  }
}

function whyInvalid(ctx: DecisionContext, order: EngineEntry[], run: EngineRun) {
  const { state } = ctx;
  if (state.baseSha && normalizeBase(state, run.baseSha).root !== normalizeBase(state, state.baseSha).root) return 'base_moved' as const;
  const included = new Set(run.ahead.map((h) => h.entryId));
  const jumped = (expectedAhead(ctx, order, run) ?? []).some((e) => e.priority === 0 && !included.has(e.id));
  return jumped ? ('preempted' as const) : ('rebuilt' as const);
}
