import { applyEvent } from './apply-event.js';
import { DecisionContext } from './context.js';
import type { Decision, EngineEvent, EngineState } from './model.js';
import { publish } from './publish.js';
import { settle } from './settle.js';
import { checkStall } from './stall.js';

/**
 * The queue engine: the next state of a queue and the actions to carry out,
 * from the current state, one event and the time. Pure: the input is not
 * modified, and the same arguments always give the same decision.
 */
export function decide(state: EngineState, event: EngineEvent, now: number): Decision {
  return decideInPlace(structuredClone(state), event, now);
}

/**
 * The same decision, made on the given state itself (no copy of the whole
 * queue): for the one writer that owns its copy of the state. Deterministic
 * like decide(); if it throws, the state may be half-changed and must be
 * reloaded. The actions never share objects with the state.
 */
export function decideInPlace(state: EngineState, event: EngineEvent, now: number): Decision {
  const ctx = new DecisionContext(state, now);
  const runsStartedBefore = state.nextRunSeq;
  applyEvent(ctx, event);
  settle(ctx);
  checkStall(ctx, runsStartedBefore);
  publish(ctx);
  return { state: ctx.state, actions: structuredClone(ctx.actions) };
}
