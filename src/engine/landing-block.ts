import type { DecisionContext } from './context.js';
import { MINUTE_MS, type EngineRun, type EngineState } from './model.js';

/**
 * A blocked landing (the host refused to land a passed run, or to build a run, for a reason no PR caused) is tried
 * again by the queue itself, not only when an operator calls updateQueue: GitHub now and then refuses a ref update
 * for a moment ("Reference update failed"), and the fix is often made on GitHub (the App added to a bypass list),
 * which tells the queue nothing. Found by review: a glitch of a few seconds stopped landing until someone noticed.
 *
 * The tries back off from a minute to half an hour. A try is small, so a refusal for good costs little: the passed
 * run waiting lands again, or, when none waits, one run at a time is built (no probes), and the try ends with the
 * host's next answer. The block stays shown, with its first `since`, until that answer says the host lets the queue
 * through: a landing for a landing refused, a run built (it reports) for a build refused.
 */
export const LANDING_RETRY_FIRST_MS = MINUTE_MS;
export const LANDING_RETRY_MAX_MS = 30 * MINUTE_MS;

type Block = NonNullable<EngineState['landingBlocked']>;

/** Whether the block keeps passed runs from landing now (not while it is being tried again). */
export function landingHeld(state: EngineState): boolean {
  return Boolean(state.landingBlocked) && state.landingBlocked?.retrying === undefined;
}

/** How many runs may start now as far as the block goes: all of them unblocked, one at a time during a try. */
export function slotsDuringBlock(state: EngineState, slots: number): number {
  const blocked = state.landingBlocked;
  if (!blocked) return slots;
  if (!blocked.retrying || state.mergingRunId) return 0;
  const fromRunSeq = blocked.retrying.fromRunSeq;
  return state.runs.some((run) => run.seq >= fromRunSeq && run.status === 'running') ? 0 : Math.min(1, slots);
}

/**
 * The host refused. A refusal answering a try counts one more try and waits longer; one while the block is held
 * (another run refused alike) only updates the message. The passed run refused twice is built again once (its own
 * commit may be what is refused: a check protection requires now that it never ran), and `true` says so.
 */
export function blockLanding(ctx: DecisionContext, message: string, refused: { kind: 'land'; run: EngineRun } | { kind: 'build'; run?: EngineRun }): boolean {
  const before = ctx.state.landingBlocked;
  // Held, or a refusal of a build asked before the try (carried out slowly): not the try's answer (found by review).
  const leftOver = refused.kind === 'build' && refused.run !== undefined && before?.retrying !== undefined && refused.run.seq < before.retrying.fromRunSeq;
  if (before && (!before.retrying || leftOver)) {
    // A left-over refusal keeps what the block says (a landing's refusal is not to read as a build's; found by review).
    if (!leftOver) ctx.state.landingBlocked = { ...before, message };
    return false;
  }
  const tries = before ? (before.tries ?? 0) + 1 : 0;
  const waitMs = Math.min(LANDING_RETRY_MAX_MS, LANDING_RETRY_FIRST_MS * 2 ** tries);
  const again = refused.kind === 'land' && before?.refusedRunId === refused.run.id;
  const rebuild = again && !before?.rebuiltOnce;
  // A block of landing stays one until a landing goes through, whatever else a try meets (found by review: a build refused
  // for a moment during a try made it a build block, which the next run reported lifted, and landing was refused again).
  const kind = before?.kind === 'land' ? 'land' : refused.kind;
  const next: Block = { since: before?.since ?? ctx.now, message, kind, tries, retryAt: ctx.now + waitMs };
  if (refused.kind === 'land') next.refusedRunId = refused.run.id;
  else if (before?.refusedRunId !== undefined) next.refusedRunId = before.refusedRunId;
  if (rebuild || before?.rebuiltOnce) next.rebuiltOnce = true;
  ctx.state.landingBlocked = next;
  return rebuild;
}

/** Before the queue's steps: a block whose time has come is tried (see slotsDuringBlock); a wake is asked for it. */
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

/** A run built during a try of a refused build reported a result: the host built it, so the block is over. */
export function runReportedDuringTry(state: EngineState, run: EngineRun): void {
  const blocked = state.landingBlocked;
  if (blocked?.retrying && blocked.kind !== 'land' && run.seq >= blocked.retrying.fromRunSeq) state.landingBlocked = null;
}
