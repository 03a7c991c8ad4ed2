import type { DecisionContext } from './context.js';
import type { EngineState } from './model.js';

/**
 * Whether runs built for the queue's current mode are still to be decided: running, landing, or passed while the
 * queue is paused (it lands once resumed). A mode change waits for them: switched before, the new mode would drop a
 * passed run and test its PRs again. A passed run that cannot land in a running queue (a blocked landing, a PR
 * undecided ahead of it) does not hold the switch: it might never land, and the switch would never end.
 */
export function holdsModeRuns(state: EngineState): boolean {
  const held = (r: { status: string }) => r.status === 'running' || (r.status === 'passed' && state.requestedState === 'PAUSED');
  return state.runs.some(held) || Boolean(state.mergingRunId);
}

/** Ends a mode switch once the old mode's runs are decided. */
export function endModeSwitch(ctx: DecisionContext): void {
  const { state } = ctx;
  if (state.switchingToMode && !holdsModeRuns(state)) {
    state.config = { ...state.config, mode: state.switchingToMode };
    state.switchingToMode = null;
    ctx.allAdmissionInputsChanged(); // A parallel queue wants impacted targets; a single one does not.
  }
}
