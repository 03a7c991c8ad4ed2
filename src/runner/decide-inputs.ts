import { decideAllInPlace, decideInPlace, EventNotApplied, type TimedEvent } from '../engine/decide.js';
import type { EngineEntry, EngineState } from '../engine/model.js';
import { entryIndex } from '../engine/entry-index.js';
import { queueOrder } from '../engine/order.js';
import type { StoredDecision, StoredSnapshot } from '../ports/engine-store.js';
import { engineEventOf, submissionOf, type InboxItem, type RunnerAction, type RunnerInput } from './runner-model.js';

/** One decision: the inputs applied in order, and everything they call for. */
export interface DecidedInputs {
  state: EngineState;
  actions: RunnerAction[];
  /** The queued entries in queue order after the last event (none: no event reached the engine). */
  queued?: EngineEntry[];
}

/** Thrown when one input cannot be applied (a bug): the runner sets it aside instead of retrying it forever. */
export class PoisonInput extends Error {
  constructor(
    readonly item: InboxItem,
    cause: unknown,
  ) {
    super(`input ${item.input.type} could not be applied`, { cause });
  }
}

/**
 * Applies inbox inputs to the engine state, in place (the runner owns its copy;
 * on an error it reloads it). Besides the engine's own actions,
 * intents the runner records itself (a resubmission, a priority, a restart in
 * the timeline, a test run's results) and host reads it must do come out as
 * actions, so everything one decision calls for is stored together.
 *
 * `together`: the inputs' events are decided as one (decideAllInPlace: one pass
 * over the queue for the lot), else one by one, as decisions stored before were.
 * An input that cannot be applied is named by PoisonInput; a failure while the
 * queue settles names none (SettleFailed): the writer then decides them one by one.
 */
export function decideInputs(state: EngineState, items: InboxItem[], together = true): DecidedInputs {
  const actions: RunnerAction[] = [];
  let readBase = false;
  let mergeFinished = false;
  const awaitingBefore = state.awaitingBaseHead === true;
  const events: Array<TimedEvent & { item: InboxItem }> = [];
  const round = new RoundEntries(together);
  let queued: EngineEntry[] | undefined;
  for (const item of items) {
    try {
      actions.push(...recordsFor(state, item, round));
      round.note(item.input);
      const event = engineEventOf(item.input);
      if (event) {
        if (together) events.push({ event, at: Math.max(item.at, 0), item });
        else {
          const decision = decideInPlace(state, event, Math.max(item.at, 0));
          actions.push(...decision.actions);
          queued = decision.queued;
        }
      }
    } catch (error) {
      throw new PoisonInput(item, error);
    }
    // The branch moved under a merge: what it holds now is read from the host, never guessed.
    if (item.input.type === 'merge_finished' && !item.input.ok && item.input.reason === 'base_moved') readBase = true;
    if (item.input.type === 'merge_finished') mergeFinished = true;
    if (item.input.type === 'base_head_changed') readBase = true;
  }
  if (events.length > 0) {
    try {
      const decision = decideAllInPlace(state, events);
      actions.push(...decision.actions);
      queued = decision.queued;
    } catch (error) {
      if (error instanceof EventNotApplied) throw new PoisonInput((events[error.index] as (typeof events)[number]).item, error.cause);
      throw new SettleFailed(error);
    }
  }
  // The branch head is asked for while unknown (a new queue, a restart, a first read the host refused):
  // on every decision until it is known, since nothing starts without it; and when the engine began waiting for it
  // (a push of the queue's own landing that came late, apply-event.ts base_moved); and when a merge ended with the engine
  // still waiting for it: a read answered while the merge was in flight was only pending (a forced push then, found by
  // review: applied with the merge's outcome, it left the queue waiting for a read nobody asked for).
  if (readBase || state.baseSha === null || (state.awaitingBaseHead === true && (!awaitingBefore || mergeFinished))) actions.push({ type: 'read_base_head' });
  return { state, actions: oneReadPerPullRequest(actions), ...(queued ? { queued } : {}) };
}

/**
 * A PR is read once per decision however many of its inputs asked (found by review: each of a CI's 40 jobs reports a
 * check, and each check event read the PR again, 3 to 5 requests a time, ahead of the queue's own runs and landings).
 * The read happens after the decision is recorded, so one answers them all.
 */
function oneReadPerPullRequest(actions: RunnerAction[]): RunnerAction[] {
  const asked = new Set<number>();
  return actions.filter((action) => {
    if (action.type !== 'refresh_pull_request') return true;
    if (asked.has(action.prNumber)) return false;
    asked.add(action.prNumber);
    return true;
  });
}

/** The queue could not be settled after inputs decided together: which input is to blame is found one by one. */
export class SettleFailed extends Error {
  constructor(cause: unknown) {
    super('the engine could not settle the queue after these inputs', { cause });
  }
}

/**
 * Which entries the engine holds as each input of a round is recorded. One by one, the state shows it. Decided
 * together, the state changes only once all are applied: what it held before, with what the inputs before this
 * one add or end.
 */
class RoundEntries {
  private readonly arriving = new Set<string>();
  private readonly leaving = new Set<string>();

  constructor(private readonly together: boolean) {}

  held(state: EngineState, entryId: string): boolean {
    if (this.leaving.has(entryId)) return false;
    return this.arriving.has(entryId) || entryIndex(state.entries).has(entryId);
  }

  /** After the input's records: what it adds or ends is held, or not, for the inputs after it. */
  note(input: RunnerInput): void {
    if (!this.together) return;
    const submitted = submissionOf(input);
    if (submitted) {
      this.arriving.add(submitted.entryId);
      this.leaving.delete(submitted.entryId);
    }
    if (input.type === 'cancel_requested' || input.type === 'cancelled') {
      this.leaving.add(input.entryId);
      this.arriving.delete(input.entryId);
    }
  }
}

/** What the runner itself records for an input, before the engine's actions. */
function recordsFor(state: EngineState, item: InboxItem, round: RoundEntries): RunnerAction[] {
  const { input, at } = item;
  const held = (entryId: string) => round.held(state, entryId);
  switch (input.type) {
    case 'resubmitted': {
      const { entryId, priority, noBatch } = input.submitted;
      return [{ type: 'record_resubmission', entryId, attempt: input.attempt, priority, noBatch, at }];
    }
    // A submit of an entry the engine holds changes only these; a new one's are in its first record, which the
    // runner writes now (from its request's claim, or kept as it is when the entry was written before).
    case 'submitted':
      return held(input.entryId)
        ? [{ type: 'record_priority', entryId: input.entryId, priority: input.priority, noBatch: input.noBatch }]
        : [{ type: 'record_entry', entryId: input.entryId, prNumber: input.prNumber, priority: input.priority, noBatch: input.noBatch }];
    case 'priority_changed':
      return held(input.entryId) ? [{ type: 'record_priority', entryId: input.entryId, priority: input.priority, noBatch: input.noBatch }] : [];
    case 'restart_requested': {
      // The same request handled again (its webhook delivery retried) restarts nothing, so it is not told twice either.
      const again = input.requestId !== undefined && entryIndex(state.entries).get(input.entryId)?.restartedFor === input.requestId;
      return again ? [] : [{ type: 'record_timeline', entryId: input.entryId, reason: 'restart_requested', at }];
    }
    case 'cancel_requested':
      // An entry the engine does not hold (a submission never decided, or stored before it): it still ends
      // CANCELLED (written from its submission's claim when nothing wrote it yet: the change names its PR).
      return held(input.entryId) ? [] : [{ type: 'publish_status', entryId: input.entryId, prNumber: input.prNumber, state: 'CANCELLED', reason: 'user_requested' }];
    case 'refresh_pull_request':
      return [{ type: 'refresh_pull_request', prNumber: input.prNumber }];
    case 'pr_facts_read':
      return [{ type: 'record_facts', entryId: input.entryId, facts: input.facts }];
    case 'test_run_reported':
      return [{ type: 'record_test_result', testRunId: input.testRunId, passed: input.passed, checkRuns: input.checkRuns, failedChecks: input.failedChecks, at }];
    default:
      return [];
  }
}

/** The state a snapshot and the decisions after it stand for (decide is deterministic). Changes the snapshot's state. */
export function loadState(snapshot: StoredSnapshot, decisions: StoredDecision[]): EngineState {
  const state = snapshot.state;
  for (const decision of decisions) {
    const events = decision.items.flatMap((item) => {
      const event = engineEventOf(item.input);
      return event ? [{ event, at: Math.max(item.at, 0) }] : [];
    });
    // Grouped as they were decided: together, or one by one.
    if (decision.together) decideAllInPlace(state, events);
    else for (const { event, at } of events) decideInPlace(state, event, at);
  }
  return state;
}

/** 1-based places in line of the queued entries (in `queued`, the order a decision gave, when it is current). */
export function positionsOf(state: EngineState, queued: readonly EngineEntry[] = queueOrder(state)): Map<string, number> {
  return new Map(queued.map((entry, index) => [entry.id, index + 1]));
}
