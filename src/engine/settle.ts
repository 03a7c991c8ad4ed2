import { HOST_STILL_DECIDING, notReadyReason } from './admission.js';
import type { DecisionContext } from './context.js';
import { MINUTE_MS } from './model.js';
import { decideFailures } from './failures.js';
import { tryBlockedLandingAgain } from './landing-block.js';
import { merge } from './merge-step.js';
import { endModeSwitch } from './mode-switch.js';
import { runOf } from './order.js';
import { reconcile } from './run-validity.js';
import { answerPredictions } from './risk.js';
import { startRuns } from './start-runs.js';

/**
 * Brings the queue to rest after an event: admit, time out, drop runs whose
 * content is no longer what the queue expects, decide failures, merge, and
 * start runs. Each step may enable another, so it repeats until nothing moves.
 */
export function settle(ctx: DecisionContext): void {
  tryBlockedLandingAgain(ctx);
  for (let round = 0; round < 100; round++) {
    const before = fingerprint(ctx);
    admit(ctx);
    timeOut(ctx);
    shed(ctx);
    answerPredictions(ctx);
    reconcile(ctx);
    decideFailures(ctx);
    reconcile(ctx);
    merge(ctx);
    startRuns(ctx);
    endModeSwitch(ctx);
    if (fingerprint(ctx) === before) return;
  }
  throw new Error('engine did not settle in 100 rounds');
}

/** What a round can move: runs, the merge in flight, the mode switch, actions, entries (counted, not walked). */
function fingerprint(ctx: DecisionContext): string {
  const { state } = ctx;
  return JSON.stringify([state.entries.length, ctx.changes, state.runs.map((r) => [r.id, r.status]), state.probes?.length, state.mergingRunId, state.switchingToMode, ctx.actions.length]);
}

function admit(ctx: DecisionContext): void {
  // Only entries whose facts, targets or queue settings changed: admission depends on nothing else.
  for (const entry of ctx.admissionCandidates()) {
    const reason = notReadyReason({ targetBranch: ctx.state.targetBranch, mode: ctx.state.config.mode, mergeMethod: ctx.state.config.mergeMethod, facts: entry.facts, targetsSha: entry.targets?.sha ?? null });
    const admissible = reason === null;
    // GitHub recomputes mergeability after every push to the base (null for a while), and blocks a PR
    // while a required check of its head runs again: an admitted PR keeps its place and its run
    // meanwhile; only a definite verdict (a conflict, a failed check, a missing review) demotes it.
    const demoted = !admissible && !HOST_STILL_DECIDING.includes(reason);
    if (entry.state === 'NOT_READY' && admissible) {
      ctx.entryChanged();
      ctx.noteBefore(entry);
      entry.state = 'PENDING';
      entry.admittedAt = ctx.now;
      // Published at once, so the timeline shows admission even if testing starts in the same decision.
      ctx.publishNow(entry, 'ready');
    } else if (entry.state !== 'NOT_READY' && demoted) {
      const run = runOf(ctx.state, entry.id);
      if (run) ctx.dropRun(run, 'rebuilt');
      ctx.entryChanged();
      ctx.noteBefore(entry);
      entry.state = 'NOT_READY';
      entry.admittedAt = null;
      entry.place = null; // Back in line from the end once it is ready again.
      ctx.hint(entry.id, 'not_mergeable');
    }
  }
}

function timeOut(ctx: DecisionContext): void {
  if (ctx.state.hostOutage) return; // A run cannot be judged while its results cannot be read.
  const limit = ctx.state.config.testingTimeoutMinutes * MINUTE_MS;
  for (const run of ctx.state.runs) {
    if (run.status === 'running' && ctx.now - run.startedAt >= limit) {
      ctx.actions.push({ type: 'cancel_run', runId: run.id, timedOut: true });
      run.status = 'failed';
      run.finishedAt = ctx.now;
      run.failureReason = 'timed_out';
    }
  }
}

/** After concurrency is lowered, the deepest runs stop so the limit holds at once. */
function shed(ctx: DecisionContext): void {
  const running = ctx.state.runs.filter((r) => r.status === 'running').sort((a, b) => b.seq - a.seq);
  for (const run of running.slice(0, Math.max(0, running.length - ctx.state.config.concurrency))) ctx.dropRun(run, 'rebuilt');
}

