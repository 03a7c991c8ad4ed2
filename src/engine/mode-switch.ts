import type { DecisionContext } from './context.js';
import type { EngineState } from './model.js';

/**
 * Whether runs built for the queue's current mode are still to be decided: running, landing, or passed and waiting
 * to land (a paused queue, a blocked landing). A mode change waits for them: switched before, the new mode would
 * drop a passed run and test its PRs again.
 */
export function holdsModeRuns(state: EngineState): boolean {
  return state.runs.some((r) => r.status === 'running' || r.status === 'passed') || Boolean(state.mergingRunId);
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
