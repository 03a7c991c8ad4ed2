import { DEFAULT_STALL_ALERT_MINUTES } from '../domain/queue-config.js';
import type { DecisionContext } from './context.js';
import { MINUTE_MS } from './model.js';

/**
 * The stall alert: a running queue with admitted PRs that has not moved (no run
 * started or finished, no PR merged, failed or cancelled) for `stallAlertMinutes`
 * says so once (queue.stalled) and says once when it moves again, empties, or an
 * operator pauses it (queue.resumed). Why it is stuck is for the other problems
 * (a host outage, a blocked landing) or for CI that never reports to tell.
 */
export function checkStall(ctx: DecisionContext, runsStartedBefore: number): void {
  const { state, now } = ctx;
  const limitMinutes = state.config.stallAlertMinutes ?? DEFAULT_STALL_ALERT_MINUTES;
  const waiting = state.entries.filter((e) => e.state !== 'NOT_READY').length;
  // Runs a blocked landing's tries start are not progress (found by review: tries every 30 minutes kept a queue that
  // can never build from ever being called stalled).
  const moved = ctx.progressed || (state.nextRunSeq !== runsStartedBefore && !state.landingBlocked);
  const watching = waiting > 0 && state.requestedState === 'RUNNING' && limitMinutes > 0;
  if (moved || !watching) {
    // An idle, paused or draining queue is not stuck: its clock starts when it has work and may start it.
    state.lastProgressAt = watching ? now : undefined;
    if (watching) ctx.wakeNoLaterThan(now + limitMinutes * MINUTE_MS);
    if (state.stalled) {
      state.stalled = null;
      ctx.emit({ type: 'queue.resumed', prNumbers: [] });
    }
    return;
  }
  const since = state.lastProgressAt ?? now;
  state.lastProgressAt = since;
  const due = since + limitMinutes * MINUTE_MS;
  if (now < due) {
    ctx.wakeNoLaterThan(due);
    return;
  }
  if (state.stalled) return;
  state.stalled = { since: due, message: `Nothing has started, finished or merged for ${limitMinutes} minutes while ${waiting} pull request${waiting === 1 ? '' : 's'} wait.` };
  ctx.emit({ type: 'queue.stalled', prNumbers: [] });
}
