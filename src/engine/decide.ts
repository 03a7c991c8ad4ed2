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
  try {
    return decideAllInPlace(state, [{ event, at: now }]);
  } catch (error) {
    throw error instanceof EventNotApplied ? error.cause : error;
  }
}

/** An event and when it happened. */
export interface TimedEvent {
  event: EngineEvent;
  at: number;
}

/** An event that could not be applied (a bug): `index` says which, so the writer can set it aside. */
export class EventNotApplied extends Error {
  constructor(
    readonly index: number,
    cause: unknown,
  ) {
    super(`event ${index} could not be applied`, { cause });
  }
}

/**
 * Several events decided as one, in place: each is applied at its own time,
 * then the queue is settled and published once, at the latest. The writer
 * decides what arrived together this way (60 concurrent submits), so a
 * decision costs one pass over the queue, not one per event. Deterministic: the
 * same events together give the same decision (a replay must group them alike).
 * An event that throws while applied is named by EventNotApplied.
 */
export function decideAllInPlace(state: EngineState, events: readonly TimedEvent[]): Decision {
  const first = events[0];
  if (!first) return { state, actions: [] };
  const ctx = new DecisionContext(state, first.at);
  const runsStartedBefore = state.nextRunSeq;
  for (const [index, { event, at }] of events.entries()) {
    ctx.now = at;
    try {
      applyEvent(ctx, event);
    } catch (error) {
      throw new EventNotApplied(index, error);
    }
  }
  ctx.now = Math.max(...events.map((e) => e.at));
  settle(ctx);
  checkStall(ctx, runsStartedBefore);
  publish(ctx);
  return { state: ctx.state, actions: structuredClone(ctx.actions), queued: ctx.order() };
}
