import type { DecisionContext } from './context.js';
import { MINUTE_MS, type EngineRun, type EngineState } from './model.js';

/**
 * A blocked landing (the host refused to land, or to build a run, for a reason no PR caused) is tried again by the
 * queue itself, not only when an operator calls updateQueue: GitHub now and then refuses a ref update for a moment
 * ("Reference update failed"), and the fix is often made on GitHub (the App added to a bypass list), which tells the
 * queue nothing. Found by review: a glitch of a few seconds stopped landing until someone noticed. The tries back off
 * from a minute to half an hour, so a refusal for good costs a few requests an hour, and the block stays shown (with
 * its first `since`) until a landing, or a run built during a try, goes through.
 */
export const LANDING_RETRY_FIRST_MS = MINUTE_MS;
export const LANDING_RETRY_MAX_MS = 30 * MINUTE_MS;

/** Whether the block keeps runs from starting and passed runs from landing now (not while it is being tried again). */
export function landingHeld(state: EngineState): boolean {
  return Boolean(state.landingBlocked) && state.landingBlocked?.retrying === undefined;
}

/** The host refused again (or for the first time): the block is kept from its first refusal, its next try later. */
export function blockLanding(ctx: DecisionContext, message: string): void {
  const before = ctx.state.landingBlocked;
  const tries = before ? (before.tries ?? 0) + 1 : 0;
  const waitMs = Math.min(LANDING_RETRY_MAX_MS, LANDING_RETRY_FIRST_MS * 2 ** tries);
  ctx.state.landingBlocked = { since: before?.since ?? ctx.now, message, tries, retryAt: ctx.now + waitMs };
}

/** Before the queue's steps: a block whose time has come is tried again (runs start and land as if it were lifted). */
export function tryBlockedLandingAgain(ctx: DecisionContext): void {
  const blocked = ctx.state.landingBlocked;
  if (!blocked || blocked.retrying !== undefined) return;
  // Blocks saved before tries were kept have no time: they are tried a minute after they began.
  const retryAt = blocked.retryAt ?? blocked.since + LANDING_RETRY_FIRST_MS;
  if (ctx.now < retryAt) {
    ctx.wakeNoLaterThan(retryAt);
    return;
  }
  ctx.state.landingBlocked = { ...blocked, retrying: { fromRunSeq: ctx.state.nextRunSeq } };
}

/** A run built during a try reported a result: the host built it, so the block is over. */
export function runReportedDuringTry(state: EngineState, run: EngineRun): void {
  const retrying = state.landingBlocked?.retrying;
  if (retrying && run.seq >= retrying.fromRunSeq) state.landingBlocked = null;
}
