import type { PullRequestState, StateChangeReason } from '../domain/pull-request-state.js';
import type { DecisionContext } from './context.js';
import { entriesInOrder } from './entry-index.js';
import { MINUTE_MS, type EngineEntry, type EngineRun } from './model.js';
import { runsAndProbes } from './probes.js';

/** A queued entry's state follows from its run: stored facts, derived state. */
function derivedState(entry: EngineEntry, run: EngineRun | undefined): PullRequestState {
  if (entry.state === 'NOT_READY') return 'NOT_READY';
  switch (run?.status) {
    case 'running':
      return 'TESTING';
    case 'passed':
      return 'TESTS_PASSED';
    case 'failed':
      return 'PENDING_FAILURE';
    default:
      return 'PENDING';
  }
}

function defaultReason(state: PullRequestState, run: EngineRun | undefined): StateChangeReason {
  switch (state) {
    case 'TESTING':
      return 'test_started';
    case 'TESTS_PASSED':
      return 'tests_passed';
    case 'PENDING_FAILURE':
      return run?.failureReason ?? 'failed_tests';
    case 'PENDING':
      return 'rebuilt';
    default:
      return 'submitted';
  }
}

/**
 * Final pass of a decision: every entry takes the state its run implies, each
 * change is published with its reason, and the next wake-up is scheduled.
 */
export function publish(ctx: DecisionContext): void {
  const { state } = ctx;
  const batchesPendingFailure = new Set<EngineRun>();
  // The run deciding each entry (the first that holds it, as runOf finds it), made once.
  const runs = new Map<string, EngineRun>();
  for (const run of state.runs) for (const head of run.unit) if (!runs.has(head.entryId)) runs.set(head.entryId, run);
  // Any other entry is PENDING or NOT_READY outside any run before and after: nothing to derive or publish.
  for (const entry of entriesInOrder(state.entries, [...runs.keys(), ...ctx.touchedIds()])) {
    const run = runs.get(entry.id);
    const before = ctx.stateBefore(entry);
    const next = derivedState(entry, run);
    entry.state = next;
    const hint = ctx.hints.get(entry.id);
    // Unchanged states are not published again, but a retry is (TESTING → TESTING, on a new run).
    if (before === next && hint?.reason !== 'retried') continue;
    // A retry shows itself even when the new run starts in the same decision.
    const reason = hint && ((next !== 'TESTING' && next !== 'TESTS_PASSED') || hint.reason === 'retried') ? hint.reason : defaultReason(next, run);
    const detail = next === 'PENDING_FAILURE' && run?.failedChecks.length ? run.failedChecks.join(', ') : hint?.detail;
    ctx.actions.push({ type: 'publish_status', entryId: entry.id, prNumber: entry.prNumber, state: next, reason, ...(detail ? { detail } : {}), ...(run ? { runId: run.id } : {}) });
    if (next === 'PENDING') ctx.emit({ type: 'pull_request.queued', prNumbers: [entry.prNumber], reason });
    if (next === 'TESTING') ctx.emit({ type: 'pull_request.testing', prNumbers: [entry.prNumber], ...(run ? { runId: run.id, isBisection: run.isBisection } : {}) });
    if (next === 'PENDING_FAILURE' && run && run.unit.length > 1) batchesPendingFailure.add(run);
  }
  for (const run of batchesPendingFailure) {
    const prNumbers = run.unit.map((h) => ctx.entry(h.entryId)?.prNumber).filter((n): n is number => n !== undefined);
    ctx.emit({ type: 'pull_request_batch.pending_failure', prNumbers, runId: run.id, isBisection: run.isBisection, reason: run.failureReason ?? 'failed_tests' });
  }
  for (const run of runsAndProbes(state)) {
    if (run.status === 'running' && !state.hostOutage) ctx.wakeNoLaterThan(run.startedAt + state.config.testingTimeoutMinutes * MINUTE_MS);
  }
  if (ctx.wakeAt !== null) ctx.actions.push({ type: 'wake_at', at: ctx.wakeAt });
}
