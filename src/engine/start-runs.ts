import type { DecisionContext } from './context.js';
import { slotsDuringBlock } from './landing-block.js';
import { MINUTE_MS, type EngineEntry, type EngineRun } from './model.js';
import { overlaps } from './content.js';
import { aheadOf, headsOf, likelyToBreak, PLACES_PER_RUN, runOf } from './order.js';
import { dropStaleProbes, slotsTaken, startProbes } from './probes.js';
import { breakChance, tuningOf } from './tuning.js';

export function startRuns(ctx: DecisionContext): void {
  const { state } = ctx;
  dropStaleProbes(ctx);
  // During a host outage new runs would only wait behind the failing call.
  if (state.requestedState !== 'RUNNING' || state.switchingToMode || !state.baseSha || state.hostOutage || state.awaitingBaseHead) return;
  // A blocked landing starts nothing, or one run at a time while it is tried (no probes then).
  const blocked = Boolean(state.landingBlocked);
  let slots = slotsDuringBlock(state, state.config.concurrency - slotsTaken(ctx));
  if (slots <= 0) return;
  const order = ctx.order();
  let index = 0;
  while (slots > 0 && index < order.length) {
    const entry = order[index] as EngineEntry;
    if (runOf(state, entry.id)) {
      index++;
      continue;
    }
    // Its head is in doubt until its facts are read again (EngineEntry.awaitingFacts): the run would be refused again.
    if (entry.awaitingFacts) {
      if (state.config.mode === 'single') return; // The chain waits for it: a run behind would be built on that head.
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
      if (bisecting >= tuningOf(state).bisectionConcurrency) return;
    }
    const ahead = aheadOf(state, order, index, unit);
    // Nor on a head in doubt ahead of it: one of its lane's (parallel), or one whose own run is still in flight (single).
    if (ahead.some((e) => e.awaitingFacts)) {
      if (state.config.mode === 'single') return;
      index++;
      continue;
    }
    const direct = state.config.directMergeMode === 'always' && unit.length === 1 && ahead.length === 0 && !isBisection && !unit[0]?.retries && state.runs.length === 0 && state.mergingRunId === null;
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
      ...(direct ? { direct: true as const } : {}),
    };
    state.runs.push(run);
    unit.forEach((entry, i) => {
      if (entry.place === null) ctx.entryChanged();
      entry.place ??= run.seq * PLACES_PER_RUN + i;
    });
    ctx.actions.push({ type: 'start_run', run });
    if (unit.length > 1) ctx.emit({ type: 'pull_request_batch.testing', prNumbers: unit.map((e) => e.prNumber), runId: run.id, isBisection });
    slots--;
    index += state.config.mode === 'single' ? unit.length : 1;
  }
  // Nothing left to start: slots still idle test parts of the batches in flight ahead of time.
  if (!blocked) startProbes(ctx, slots);
}

/**
 * The PRs to test together from `index`: a bisection half, a batch, or one PR.
 * Null when a batch should wait for more PRs (batchingMinSize, up to the wait).
 * In a parallel queue a batch is taken within the first PR's lane (the PRs its
 * targets overlap, directly or through another member), so a failure and its
 * bisection stay in that lane; a PR of the lane that depends on another lane's
 * PR still ahead of it in line is not pulled past that PR (the batch ends there).
 * A PR whose head is in doubt (awaitingFacts) ends a batch, and holds back its bisection half (null).
 */
function formUnit(ctx: DecisionContext, order: EngineEntry[], index: number): EngineEntry[] | null {
  const { state } = ctx;
  const first = order[index] as EngineEntry;
  const waiting = (e: EngineEntry | undefined): e is EngineEntry => e !== undefined && !runOf(state, e.id);
  const tuning = tuningOf(state);
  // A PR likely to break is tested alone: runs behind are built without it, so nothing may land with it.
  if (first.noBatch || tuning.batchCapacity <= 1 || (!first.unitKey && likelyToBreak(first))) return [first];
  const parallel = state.config.mode === 'parallel';
  const unit = [first];
  /** Other lanes' PRs the batch went past (parallel queues). */
  const passed: EngineEntry[] = [];
  const capacity = first.unitKey ? Number.POSITIVE_INFINITY : tuning.batchCapacity;
  let blocked = false;
  // Adaptive tuning fills a batch up to a chance of passing: a PR whose risk would take it below stays out.
  const floor = first.unitKey ? null : tuning.batchPassFloor;
  let passChance = 1 - breakChance(first, tuning);
  if (floor !== null && passChance < floor) return [first];
  for (let i = index + 1; i < order.length && unit.length < capacity; i++) {
    const next = order[i] as EngineEntry;
    if (parallel && !unit.some((member) => overlaps(member, next))) {
      passed.push(next);
      continue;
    }
    // A bisection half is tested whole: it waits for its PR whose head is in doubt.
    if (first.unitKey && next.unitKey === first.unitKey && next.awaitingFacts && waiting(next)) return null;
    const chance = passChance * (1 - breakChance(next, tuning));
    if (!waiting(next) || next.awaitingFacts || next.noBatch || next.unitKey !== first.unitKey || (!first.unitKey && likelyToBreak(next)) || passed.some((other) => overlaps(other, next)) || (floor !== null && chance < floor)) {
      blocked = true;
      break;
    }
    passChance = chance;
    unit.push(next);
  }
  // Waiting only helps a batch that more PRs can still join: not one closed by a noBatch PR.
  if (first.unitKey || blocked || unit.length >= tuning.batchingMinSize) return unit;
  const oldest = Math.min(...unit.map((e) => e.admittedAt ?? ctx.now));
  const deadline = oldest + tuning.batchingMaxWaitMinutes * MINUTE_MS;
  if (ctx.now >= deadline) return unit;
  ctx.wakeNoLaterThan(deadline);
  return null;
}
