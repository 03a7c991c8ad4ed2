import { token } from './content.js';
import type { DecisionContext } from './context.js';
import { MINUTE_MS, type AppliedHead, type EngineRun, type EngineState } from './model.js';
import { packByRisk } from './failures.js';
import { LIKELY_BREAK } from './order.js';
import { isValid } from './run-validity.js';
import { breakChance, tuningOf } from './tuning.js';

/**
 * Pre-bisection in idle CI slots (adaptive tuning). A failed batch costs its
 * innocent PRs a second round: its parts are tested only once it failed. When
 * a slot would otherwise sit idle (nothing waits to start), a probe tests
 * ahead of time the part bisection would test first, on the same base and the
 * same PRs ahead as its batch (then the next part, on top of it). If the batch
 * fails and is split into exactly that part, the probe becomes the part's run
 * (failures.ts bisect): its result is there or on its way, and the round of
 * bisection is (partly) saved. If the batch passes, the probe is cancelled: it
 * took a slot nothing else wanted when it started (PROBE_SHARE bounds how many).
 * A probe decides nothing by itself: it is kept apart from `state.runs`, so no
 * PR is merged or judged on it until it is adopted, and an adopted probe is a
 * run like any other (it lands only if its content is what the queue would
 * test then, run-validity.ts).
 */

function probesOf(ctx: DecisionContext): EngineRun[] {
  return ctx.state.probes ?? [];
}

/** The queue's runs and its probes: what takes CI slots, is timed out, and is started again by a new writer. */
export function runsAndProbes(state: EngineState): EngineRun[] {
  return state.probes ? [...state.runs, ...state.probes] : state.runs;
}

/** Takes a probe out of the probes (a queue without any has no `probes`). */
function unlist(ctx: DecisionContext, probe: EngineRun): void {
  const rest = probesOf(ctx).filter((p) => p !== probe);
  if (rest.length > 0) ctx.state.probes = rest;
  else delete ctx.state.probes;
}

/** Forgets a probe; a running one is cancelled. */
function dropProbe(ctx: DecisionContext, probe: EngineRun): void {
  if (probe.status === 'running') ctx.actions.push({ type: 'cancel_run', runId: probe.id });
  unlist(ctx, probe);
}

/** Probes whose batch is no longer in flight (passed, failed and not split, dropped), or that timed out, go. */
export function dropStaleProbes(ctx: DecisionContext): void {
  const { state } = ctx;
  if (!state.probes?.length) return;
  const limit = state.config.testingTimeoutMinutes * MINUTE_MS;
  for (const probe of [...state.probes]) {
    const batch = state.runs.find((r) => r.id === probe.probeOf);
    // A host outage does not count toward its time-out (settle.ts timeOut, for runs): its result could not be read.
    const timedOut = probe.status === 'running' && !state.hostOutage && ctx.now - probe.startedAt >= limit;
    if (!batch || batch.status !== 'running' || timedOut) dropProbe(ctx, probe);
  }
  // Concurrency lowered: probes go first.
  const over = slotsTaken(ctx) - state.config.concurrency;
  if (over > 0) probesOf(ctx).filter((p) => p.status === 'running').sort((a, b) => b.seq - a.seq).slice(0, over).forEach((p) => dropProbe(ctx, p));
}

function runningProbes(ctx: DecisionContext): number {
  return probesOf(ctx).filter((p) => p.status === 'running').length;
}

/** CI slots in use: the queue's runs in flight and its probes. */
export function slotsTaken(ctx: DecisionContext): number {
  return ctx.state.runs.filter((r) => r.status === 'running').length + runningProbes(ctx);
}

/**
 * The parts bisection would split a batch into if it failed now: the risks
 * its failure would give (failures.ts blameFailedBatch), packed as packParts
 * packs them. Only the parts not likely to break: those are built on each
 * other, so each can be tested ahead of time on top of the ones before.
 */
function foreseenParts(ctx: DecisionContext, batch: EngineRun): AppliedHead[][] {
  const tuning = tuningOf(ctx.state);
  const members = batch.unit.map((head, i) => ({ head, i, entry: ctx.entry(head.entryId) }));
  if (members.some((m) => !m.entry)) return [];
  const chances = members.map((m) => breakChance(m.entry as NonNullable<typeof m.entry>, tuning));
  const allPass = chances.reduce((p, c) => p * (1 - c), 1);
  if (allPass >= 1) return [];
  const parts = packByRisk(
    members.map((m, k) => ({ head: m.head, i: m.i, risk: Math.min(1, (chances[k] as number) / (1 - allPass)) })),
    tuning.batchPassFloor ?? 1,
  );
  return parts.filter((part) => part.length > 1 || (part[0] as { risk: number }).risk < LIKELY_BREAK).map((part) => part.map((m) => m.head));
}

/**
 * At most this share of `concurrency` probes at once: a probe keeps its slot
 * until its batch's outcome, so a PR arriving meanwhile waits for another
 * slot. On bench/queue-tune-default.ts's seeds 6-15 and 36-65, mean p95 in
 * queue, no probes → probes holding at most 1, 2, or every idle slot of 4:
 * (a) 156 → 153, 146, 149 min; (b) 68 → 62.5, 63, 63.5. Probes that gave
 * their slot back to an arriving PR were cancelled before they could help
 * ((b) 68 → 67; kept once 5 minutes old: 65).
 */
const PROBE_SHARE = 0.5;

/** Uses up to `slots` idle slots for probes: the front batches first, each part on top of the ones before it. */
export function startProbes(ctx: DecisionContext, slots: number): void {
  const { state } = ctx;
  slots = Math.min(slots, Math.floor(state.config.concurrency * PROBE_SHARE) - runningProbes(ctx));
  if (state.config.tuning !== 'adaptive' || slots <= 0 || !state.baseSha) return;
  const batches = state.runs.filter((r) => r.status === 'running' && r.unit.length > 1 && r.id !== state.mergingRunId).sort((a, b) => a.seq - b.seq);
  for (const batch of batches) {
    const parts = foreseenParts(ctx, batch);
    // A part that is the whole batch would test the same content again.
    if (parts.length < 2 && parts[0]?.length === batch.unit.length) continue;
    const mine = probesOf(ctx).filter((p) => p.probeOf === batch.id);
    let ahead = [...batch.ahead];
    for (const part of parts) {
      if (slots <= 0) return;
      // The last part on top of all the others holds the batch's whole content (in another order at most): it
      // would tell nothing the batch does not.
      if (ahead.length + part.length >= batch.ahead.length + batch.unit.length) break;
      const key = part.map(token).join();
      const existing = mine.find((p) => p.unit.map(token).join() === key);
      // A part that failed would not be built on: nor are the probes behind it.
      if (existing?.status === 'failed') break;
      // Nor a head in doubt until its facts are read again (EngineEntry.awaitingFacts): the host would refuse it again.
      if ([...ahead, ...part].some((head) => ctx.entry(head.entryId)?.awaitingFacts)) break;
      if (!existing) {
        const probe: EngineRun = {
          id: `r${state.nextRunSeq}`,
          seq: state.nextRunSeq++,
          baseSha: batch.baseSha,
          ahead,
          unit: part,
          status: 'running',
          startedAt: ctx.now,
          finishedAt: null,
          isBisection: true,
          failedChecks: [],
          failureReason: null,
          probeOf: batch.id,
        };
        ctx.state.probes = [...probesOf(ctx), probe];
        ctx.actions.push({ type: 'start_run', run: probe });
        slots--;
      }
      ahead = [...ahead, ...part];
    }
  }
}

/**
 * At bisection, once the parts have their places: the probes of the failed
 * batch whose PRs are exactly one of its parts, tested on what that part is
 * tested on now, become those parts' runs; the other probes go. (A probe built
 * on a PR that is no longer ahead of its part, e.g. another lane's PR or a
 * part now placed behind it, may have failed for that PR.)
 */
export function adoptProbes(ctx: DecisionContext, batch: EngineRun, parts: AppliedHead[][]): void {
  const mine = probesOf(ctx).filter((p) => p.probeOf === batch.id);
  if (mine.length === 0) return;
  const keys = new Set(parts.map((part) => part.map(token).join()));
  const order = ctx.order();
  for (const probe of mine) {
    // A probe that hit a merge conflict is not a verdict on its part's tests: the part is tested as a run of its own,
    // whose conflict ejects the PR that conflicts as such (adopted, it would eject a lone PR as failed_tests).
    if (probe.failureReason === 'merge_conflict' || !keys.has(probe.unit.map(token).join()) || !isValid(ctx, order, probe)) {
      dropProbe(ctx, probe);
      continue;
    }
    unlist(ctx, probe);
    delete probe.probeOf;
    ctx.state.runs.push(probe);
    ctx.actions.push({ type: 'adopt_run', runId: probe.id });
  }
}

/** A probe's result (apply-event run_finished): kept until its batch's outcome says whether it is used. */
export function finishProbe(ctx: DecisionContext, runId: string, passed: boolean, failedChecks: string[], conflict = false): boolean {
  const probe = probesOf(ctx).find((p) => p.id === runId);
  if (!probe) return false;
  if (probe.status !== 'running') return true;
  probe.finishedAt = ctx.now;
  probe.status = passed && !conflict ? 'passed' : 'failed';
  probe.failedChecks = passed && !conflict ? [] : failedChecks;
  // A conflict is kept as one: such a probe is never adopted (see adoptProbes), it only stops the probes behind it.
  probe.failureReason = conflict ? 'merge_conflict' : passed ? null : 'failed_tests';
  return true;
}

/** A probe the host did not start, or that could never land: forgotten (its batch decides). */
export function forgetProbe(ctx: DecisionContext, runId: string): boolean {
  const probe = probesOf(ctx).find((p) => p.id === runId);
  if (!probe) return false;
  dropProbe(ctx, probe);
  return true;
}
