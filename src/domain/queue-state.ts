/** What the operator asked the queue to do; SWITCHING_MODES is never chosen by a client. */
export const REQUESTED_QUEUE_STATES = ['RUNNING', 'PAUSED', 'DRAINING'] as const;
export type RequestedQueueState = (typeof REQUESTED_QUEUE_STATES)[number];

/** The seed's queue states, as the API shows them. */
export const QUEUE_STATES = [...REQUESTED_QUEUE_STATES, 'SWITCHING_MODES'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

/**
 * The shown state is derived from two stored facts: what the operator asked for,
 * and whether a mode change is still waiting for in-flight runs to end. A pause or
 * a drain asked for during the switch is shown: it says what the queue does (a
 * paused queue merges nothing; a switching one merges), and the switch ends meanwhile.
 */
export function shownQueueState(requested: RequestedQueueState, modeSwitchStartedAt: Date | null): QueueState {
  return modeSwitchStartedAt && requested === 'RUNNING' ? 'SWITCHING_MODES' : requested;
}
