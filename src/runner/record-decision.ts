import type { TestRunRecord } from '../domain/records.js';
import type { EmittedEvent } from '../engine/model.js';
import type { InboxItem, RunnerAction } from './runner-model.js';
import { recordRunCancelled, recordRunStart, type ActionContext } from './execute-actions.js';
import { outgoingEvents } from './webhook-events.js';

/** Keys order the runner's writes to an entry: decision version, then place in the decision. */
export const KEYS_PER_DECISION = 100_000;

/**
 * The database-only effects of one decision, applied before the request that
 * caused it is answered: entry states and timelines, test-run records and
 * results, outgoing events, wake-ups. Every write is keyed by (version, index), so
 * applying a decision twice (after a crash) changes nothing the second time.
 */
export async function recordDecision(ctx: ActionContext, version: number, actions: RunnerAction[]): Promise<RecordedDecision> {
  const { stores } = ctx;
  const finishedRuns: TestRunRecord[] = [];
  // One look per decision at whether anyone subscribed (events nobody receives are not built), made while
  // the state changes before the first event are written.
  const subscribed = ctx.outbox && actions.some((a) => a.type === 'emit') ? (ctx.outbox.hasSubscribers?.(ctx.queue.repo) ?? Promise.resolve(true)) : Promise.resolve(false);
  subscribed.catch(() => undefined); // Awaited at the first event; a write failing before it ends the record first.
  // State changes are written for many PRs at once (one PR's in order): a decision about 60 concurrent
  // submits waits for one write, not 120 one after another. They are held back past events and wake-ups
  // (which read no entry state) and written before any other effect, which stays in order.
  // New entries go with them: each written whole, its first state changes included (an insert, not an update).
  // The decision's events, published together once its entries are written (one listing of the endpoints, not one per event).
  const emitted: EmittedEvent[] = [];
  let transitions: Parameters<typeof stores.entries.recordTransitions>[0] = [];
  let firsts: Parameters<typeof stores.entries.recordTransitions>[1] & object = [];
  const writeTransitions = async () => {
    if (transitions.length > 0 || firsts.length > 0) await stores.entries.recordTransitions(transitions, firsts);
    transitions = [];
    firsts = [];
  };
  for (const [index, action] of actions.entries()) {
    const key = version * KEYS_PER_DECISION + index;
    if (action.type === 'record_entry') {
      const { type: _type, ...first } = action;
      firsts.push({ ...first, queueId: ctx.queue.id });
      continue;
    }
    if (action.type === 'publish_status') {
      const at = new Date(ctx.now());
      const event = { at, state: action.state, reason: action.reason, ...(action.detail ? { detail: action.detail } : {}) };
      transitions.push({ entryId: action.entryId, event, key, claim: { queueId: ctx.queue.id, prNumber: action.prNumber } });
      continue;
    }
    if (action.type !== 'emit' && action.type !== 'wake_at') await writeTransitions();
    switch (action.type) {
      case 'record_resubmission':
        await stores.entries.recordResubmission(
          action.entryId,
          { attempt: action.attempt, priority: action.priority, noBatch: action.noBatch, at: new Date(action.at) },
          key,
        );
        break;
      case 'record_priority':
        await stores.entries.recordPriority(action.entryId, action.priority, action.noBatch);
        break;
      case 'record_timeline': {
        const entry = await stores.entries.findById(action.entryId);
        if (entry) await stores.entries.appendTimeline(action.entryId, { at: new Date(action.at), state: entry.state, reason: action.reason }, key);
        break;
      }
      case 'record_facts':
        // Through the inbox and the log as JSON: the read time comes back as text.
        await stores.entries.setFacts(action.entryId, { ...action.facts, readAt: new Date(action.facts.readAt) });
        break;
      case 'record_test_result': {
        const run = await stores.testRuns.findById(ctx.queue.id, action.testRunId);
        if (!run || run.status !== 'in_progress') break; // Cancelled meanwhile, or recorded already.
        const result = {
          status: action.passed ? ('succeeded' as const) : ('failed' as const),
          finishedAt: new Date(action.at),
          checkRuns: action.checkRuns,
          failureStatuses: action.failedChecks,
        };
        await stores.testRuns.update(run.id, result);
        finishedRuns.push({ ...run, ...result });
        break;
      }
      case 'start_run':
        await recordRunStart(ctx, action.run);
        break;
      case 'adopt_run': {
        const record = await stores.testRuns.findByEngineRunId(ctx.queue.id, action.runId);
        if (record?.probeOf) await stores.testRuns.adoptProbe(record.id);
        break;
      }
      case 'cancel_run': {
        const timedOut = await recordRunCancelled(ctx, action.runId, action.timedOut ?? false);
        if (timedOut) finishedRuns.push(timedOut);
        break;
      }
      case 'emit':
        ctx.log.info({ queueId: ctx.queue.id, event: action.event }, 'queue event');
        emitted.push(action.event);
        break;
      case 'wake_at':
        ctx.timers.schedule(ctx.queue.id, action.at, ctx.now(), () => ctx.wake());
        break;
      default:
        break; // Host actions: carried out in the background (execute-actions.ts).
    }
  }
  await writeTransitions();
  if (ctx.outbox && emitted.length > 0 && (await subscribed)) {
    const at = new Date(ctx.now());
    const events = [];
    for (const event of emitted) events.push(...(await outgoingEvents(stores, ctx.queue, event, at)));
    await ctx.outbox.publish(...events);
  }
  return { finishedRuns };
}

/** What recording a decision did that its writer keeps in memory: the test runs whose results it recorded (timed out ones included). */
export interface RecordedDecision {
  finishedRuns: TestRunRecord[];
}

/**
 * The entries a decision's record wrote, or whose first write (the insert by the request that submitted them)
 * it follows: every entry write of the runner comes from an action naming its entry.
 */
export function entriesRecorded(items: readonly InboxItem[], actions: readonly RunnerAction[]): string[] {
  const ids = new Set<string>();
  for (const { input } of items) {
    if (input.type === 'submitted') ids.add(input.entryId);
    if (input.type === 'resubmitted') ids.add(input.submitted.entryId);
  }
  for (const action of actions) {
    switch (action.type) {
      case 'publish_status':
      case 'record_entry':
      case 'record_resubmission':
      case 'record_priority':
      case 'record_timeline':
      case 'record_facts':
        ids.add(action.entryId);
        break;
      default:
        break;
    }
  }
  return [...ids];
}

/** The PRs whose impacted targets a decision was told of (each upload for an enqueued PR is). */
export function targetsDecided(items: readonly InboxItem[]): number[] {
  return items.flatMap(({ input }) => (input.type === 'impacted_targets_set' ? [input.prNumber] : []));
}
