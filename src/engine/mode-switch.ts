import type { DecisionContext } from './context.js';
import type { EngineState } from './model.js';

/**
 * At a change of the queue's settings: whether runs built for its current mode are still to be decided (running,
 * landing, or passed: the change itself may let a passed run land, as a resume or a lifted landing block does). A new
 * mode waits for them (SWITCHING_MODES): switched at once, it would drop a passed run and test its PRs again.
 */
export function modeRunsUndecided(state: EngineState): boolean {
  return state.runs.some((r) => r.status === 'running' || r.status === 'passed') || Boolean(state.mergingRunId);
}

/**
 * Whether a switch still waits once the queue has taken its steps: for runs running or landing, and for a passed run
 * while landing waits for what passes on its own or by an operator's resume (a paused queue, a host outage, the
 * branch's head not known yet). A passed run that may never land (a landing blocked until the repository's settings
 * change, a PR undecided ahead of it that cannot start during the switch) does not hold it, or it could never end.
 */
function holdsModeSwitch(state: EngineState): boolean {
  const landingWaits = state.requestedState === 'PAUSED' || Boolean(state.hostOutage) || state.awaitingBaseHead === true || !state.baseSha;
  const held = (r: { status: string }) => r.status === 'running' || (r.status === 'passed' && landingWaits && !state.landingBlocked);
  return state.runs.some(held) || Boolean(state.mergingRunId);
}

/** Ends a mode switch once the old mode's runs are decided (see holdsModeSwitch). */
export function endModeSwitch(ctx: DecisionContext): void {
  const { state } = ctx;
  if (state.switchingToMode && !holdsModeSwitch(state)) {
    state.config = { ...state.config, mode: state.switchingToMode };
    state.switchingToMode = null;
    ctx.allAdmissionInputsChanged(); // A parallel queue wants impacted targets; a single one does not.
  }
}
