import { notReadyReason } from './admission.js';
import { batchCapacity } from './batch-size.js';
import { headOf, normalizeBase, runContent, sameContent, token } from './content.js';
import type { DecisionContext } from './context.js';
import type { EngineEntry, EngineRun } from './model.js';
import { aheadOf, headsOf, PLACES_PER_RUN, queueOrder, runOf } from './order.js';

const MINUTE = 60_000;

/**
 * Brings the queue to rest after an event: admit, time out, drop runs whose
 * content is no longer what the queue expects, decide failures, merge, and
 * start runs. Each step may enable another, so it repeats until nothing moves.
 */
export function settle(ctx: DecisionContext): void {
  for (let round = 0; round < 100; round++) {
    const before = fingerprint(ctx);
    admit(ctx);
    timeOut(ctx);
    shed(ctx);
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

function fingerprint(ctx: DecisionContext): string {
  const { state } = ctx;
  return JSON.stringify([state.entries.map((e) => [e.id, e.state, e.unitKey]), state.runs.map((r) => [r.id, r.status]), state.mergingRunId, state.switchingToMode, ctx.actions.length]);
}

function admit(ctx: DecisionContext): void {
  for (const entry of ctx.state.entries) {
    const admissible =
      notReadyReason({ targetBranch: ctx.state.targetBranch, mode: ctx.state.config.mode, facts: entry.facts, targetsSha: entry.targets?.sha ?? null }) === null;
    if (entry.state === 'NOT_READY' && admissible) {
      entry.state = 'PENDING';
      entry.admittedAt = ctx.now;
      // Published at once, so the timeline shows admission even if testing starts in the same decision.
      ctx.publishNow(entry, 'ready');
    } else if (entry.state !== 'NOT_READY' && !admissible) {
      const run = runOf(ctx.state, entry.id);
      if (run) ctx.dropRun(run, 'rebuilt');
      entry.state = 'NOT_READY';
      entry.admittedAt = null;
      entry.place = null; // Back in line from the end once it is ready again.
      ctx.hint(entry.id, 'not_mergeable');
    }
  }
}

function timeOut(ctx: DecisionContext): void {
  const limit = ctx.state.config.testingTimeoutMinutes * MINUTE;
  for (const run of ctx.state.runs) {
    if (run.status === 'running' && ctx.now - run.startedAt >= limit) {
      ctx.actions.push({ type: 'cancel_run', runId: run.id });
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

/** Where a run's unit stands in the queue, and what it must be tested on. */
function expectedAhead(ctx: DecisionContext, order: EngineEntry[], run: EngineRun): EngineEntry[] | null {
  const unit = run.unit.map((h) => ctx.entry(h.entryId));
  if (unit.some((e) => !e)) return null;
  const index = order.indexOf(unit[0] as EngineEntry);
  if (index < 0) return null;
  return aheadOf(ctx.state, order, index, unit as EngineEntry[]);
}

/** Whether a run still tests what the queue would test now. */
export function isValid(ctx: DecisionContext, order: EngineEntry[], run: EngineRun): boolean {
  const { state } = ctx;
  if (!state.baseSha) return false;
  const ahead = expectedAhead(ctx, order, run);
  if (!ahead) return false;
  const units = run.unit.map((h) => token(h));
  const currentUnit = run.unit.map((h) => token(headOf(ctx.entry(h.entryId) as EngineEntry)));
  if (units.join() !== currentUnit.join()) return false;
  const current = normalizeBase(state, state.baseSha);
  if (state.config.mode === 'single') {
    return sameContent(runContent(state, run), { root: current.root, heads: [...current.heads, ...headsOf(ahead).map(token), ...units] });
  }
  // Parallel: the same lane on the same root; merges of other lanes do not matter.
  const runBase = normalizeBase(state, run.baseSha);
  if (runBase.root !== current.root || runBase.heads.some((h) => !current.heads.includes(h))) return false;
  const unmergedAhead = run.ahead.map(token).filter((t) => !current.heads.includes(t));
  return unmergedAhead.join() === headsOf(ahead).map(token).join();
}

/**
 * Drops runs that no longer test what the queue would test now, one at a time:
 * each drop moves PRs in the order, which may invalidate the runs behind them.
 */
function reconcile(ctx: DecisionContext): void {
  for (;;) {
    const order = queueOrder(ctx.state);
    const invalid = ctx.state.runs
      .filter((run) => run.id !== ctx.state.mergingRunId) // Its merge decides it.
      .sort((a, b) => a.seq - b.seq)
      .find((run) => !isValid(ctx, order, run));
    if (!invalid) return;
    ctx.dropRun(invalid, whyInvalid(ctx, order, invalid));
  }
}

function whyInvalid(ctx: DecisionContext, order: EngineEntry[], run: EngineRun) {
  const { state } = ctx;
  if (state.baseSha && normalizeBase(state, run.baseSha).root !== normalizeBase(state, state.baseSha).root) return 'base_moved' as const;
  const included = new Set(run.ahead.map((h) => h.entryId));
  const jumped = (expectedAhead(ctx, order, run) ?? []).some((e) => e.priority === 0 && !included.has(e.id));
  return jumped ? ('preempted' as const) : ('rebuilt' as const);
}

/**
 * A failed run is the fault of its own PRs only once everything ahead of them
 * passed; until then they are PENDING_FAILURE. A failed batch is split in two
 * and each half tested again, until the culprit is alone.
 */
function decideFailures(ctx: DecisionContext): void {
  const { state } = ctx;
  const order = queueOrder(state);
  for (const run of state.runs.filter((r) => r.status === 'failed').sort((a, b) => a.seq - b.seq)) {
    if (!state.runs.includes(run)) continue;
    const ahead = expectedAhead(ctx, order, run) ?? [];
    const aheadSettled = ahead.every((e) => runOf(state, e.id)?.status === 'passed');
    // A failed batch is split at once, its parts tested on the same PRs ahead: if those
    // pass, the parts' results stand; if not, the parts are rebuilt like any run behind.
    if (run.unit.length > 1 && !ahead.some((e) => runOf(state, e.id)?.status === 'failed')) {
      bisect(ctx, run);
      continue;
    }
    if (!aheadSettled) continue;
    const tokens = run.unit.map(token);
    const behind = state.runs.filter((r) => r.seq > run.seq && tokens.every((t) => r.ahead.map(token).includes(t)));
    // Proven by a later run that contains it: the optimistic merge takes both (single queues).
    if (state.config.mode === 'single' && state.config.canOptimisticallyMerge && behind.some((r) => r.status === 'passed')) continue;
    const finishedBehind = behind.filter((r) => r.status !== 'running').length;
    const runningBehind = behind.length - finishedBehind;
    if (finishedBehind < state.config.pendingFailureDepth && runningBehind > 0) continue;
    const detail = run.failedChecks.length > 0 ? run.failedChecks.join(', ') : undefined;
    const reason = run.failureReason ?? 'failed_tests';
    if (run.unit.length === 1) {
      ctx.conclude(run.unit[0]?.entryId as string, 'FAILED', reason, detail);
      continue;
    }
    bisect(ctx, run);
  }
}

/** Splits a failed batch into as many parts as may be tested at once (at least two). */
function bisect(ctx: DecisionContext, run: EngineRun): void {
  const parts = Math.min(run.unit.length, Math.max(2, ctx.state.config.bisectionConcurrency));
  const size = Math.ceil(run.unit.length / parts);
  const halves: EngineRun['unit'][] = [];
  for (let i = 0; i < run.unit.length; i += size) halves.push(run.unit.slice(i, i + size));
  ctx.dropRun(run, 'bisecting');
  ctx.emit({ type: 'pull_request_batch.failed', prNumbers: run.unit.map((h) => ctx.entry(h.entryId)?.prNumber ?? 0), runId: run.id, reason: 'failed_tests' });
  halves.forEach((heads, i) => {
    for (const head of heads) {
      const entry = ctx.entry(head.entryId);
      if (!entry) continue;
      entry.unitKey = `${run.id}.${i}`;
      entry.bisection = true;
      ctx.hint(entry.id, 'bisecting');
    }
  });
}

/**
 * Merges the front of the queue when its run passed. With optimistic merging,
 * the deepest passing run merges everything it contains at once, PRs ahead
 * included: that content passed as exactly that content.
 */
function merge(ctx: DecisionContext): void {
  const { state } = ctx;
  if (state.mergingRunId || state.requestedState === 'PAUSED' || !state.baseSha) return;
  const order = queueOrder(state);
  const passed = state.runs.filter((r) => r.status === 'passed' && isValid(ctx, order, r)).sort((a, b) => a.seq - b.seq);
  let chosen: EngineRun | undefined;
  if (state.config.mode === 'parallel') {
    chosen = passed.find((r) => (expectedAhead(ctx, order, r) ?? [null]).length === 0);
  } else {
    const front = order[0];
    const frontRun = front ? runOf(state, front.id) : undefined;
    if (state.config.canOptimisticallyMerge) chosen = passed[passed.length - 1];
    else if (frontRun?.status === 'passed' && passed.includes(frontRun)) chosen = frontRun;
  }
  if (!chosen) return;
  state.mergingRunId = chosen.id;
  const entryIds = [...chosen.ahead, ...chosen.unit].map((h) => h.entryId).filter((id) => ctx.entry(id));
  ctx.actions.push({ type: 'merge', runId: chosen.id, entryIds, expectedBaseSha: state.baseSha });
}

function startRuns(ctx: DecisionContext): void {
  const { state } = ctx;
  if (state.requestedState !== 'RUNNING' || state.switchingToMode || !state.baseSha) return;
  let slots = state.config.concurrency - state.runs.filter((r) => r.status === 'running').length;
  const order = queueOrder(state);
  let index = 0;
  while (slots > 0 && index < order.length) {
    const entry = order[index] as EngineEntry;
    if (runOf(state, entry.id)) {
      index++;
      continue;
    }
    const unit = formUnit(ctx, order, index);
    if (!unit) {
      if (state.config.mode === 'single') return; // The chain waits for this unit.
      index++;
      continue;
    }
    const isBisection = unit.some((e) => e.bisection);
    if (isBisection) {
      const bisecting = state.runs.filter((r) => r.status === 'running' && r.isBisection).length;
      if (bisecting >= state.config.bisectionConcurrency) return;
    }
    const ahead = aheadOf(state, order, index, unit);
    const run: EngineRun = {
      id: `r${state.nextRunSeq}`,
      seq: state.nextRunSeq++,
      baseSha: state.baseSha,
      ahead: headsOf(ahead),
      unit: headsOf(unit),
      status: 'running',
      startedAt: ctx.now,
      finishedAt: null,
      isBisection,
      failedChecks: [],
      failureReason: null,
    };
    state.runs.push(run);
    unit.forEach((entry, i) => {
      entry.place ??= run.seq * PLACES_PER_RUN + i;
    });
    ctx.actions.push({ type: 'start_run', run });
    if (unit.length > 1) ctx.emit({ type: 'pull_request_batch.testing', prNumbers: unit.map((e) => e.prNumber), runId: run.id, isBisection });
    slots--;
    index += state.config.mode === 'single' ? unit.length : 1;
  }
}

/**
 * The PRs to test together from `index`: a bisection half, a batch, or one PR.
 * Null when a batch should wait for more PRs (batchingMinSize, up to the wait).
 */
function formUnit(ctx: DecisionContext, order: EngineEntry[], index: number): EngineEntry[] | null {
  const { state } = ctx;
  const first = order[index] as EngineEntry;
  const waiting = (e: EngineEntry | undefined): e is EngineEntry => e !== undefined && !runOf(state, e.id);
  if (state.config.mode === 'parallel' || first.noBatch || !state.config.batch) return [first];
  const unit = [first];
  const capacity = first.unitKey ? Number.POSITIVE_INFINITY : batchCapacity(state);
  let blocked = false;
  for (let i = index + 1; i < order.length && unit.length < capacity; i++) {
    const next = order[i];
    if (!waiting(next) || next.noBatch || next.unitKey !== first.unitKey) {
      blocked = true;
      break;
    }
    unit.push(next);
  }
  // Waiting only helps a batch that more PRs can still join: not one closed by a noBatch PR.
  if (first.unitKey || blocked || unit.length >= state.config.batchingMinSize) return unit;
  const oldest = Math.min(...unit.map((e) => e.admittedAt ?? ctx.now));
  const deadline = oldest + state.config.batchingMaxWaitTimeMinutes * MINUTE;
  if (ctx.now >= deadline) return unit;
  ctx.wakeNoLaterThan(deadline);
  return null;
}

function endModeSwitch(ctx: DecisionContext): void {
  const { state } = ctx;
  if (state.switchingToMode && !state.runs.some((r) => r.status === 'running') && !state.mergingRunId) {
    state.config = { ...state.config, mode: state.switchingToMode };
    state.switchingToMode = null;
  }
}
