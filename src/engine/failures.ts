import { token } from './content.js';
import type { DecisionContext } from './context.js';
import type { EngineEntry, EngineRun } from './model.js';
import { LIKELY_BREAK, likelyToBreak, runOf, vouchedRetryDue } from './order.js';
import { adoptProbes } from './probes.js';
import { expectedAhead, reconcile } from './run-validity.js';
import { breakChance, tuningOf } from './tuning.js';

/**
 * A failed run is the fault of its own PRs only once everything ahead of them
 * passed; until then they are PENDING_FAILURE. A failed batch is split in two
 * and each half tested again, until the culprit is alone.
 */
export function decideFailures(ctx: DecisionContext): void {
  const { state } = ctx;
  const order = ctx.order();
  const failed = state.runs.filter((r) => r.status === 'failed');
  for (const run of [...failed].sort((a, b) => a.seq - b.seq)) {
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
    const tuning = tuningOf(state);
    if (state.config.mode === 'single' && tuning.canOptimisticallyMerge && behind.some((r) => r.status === 'passed')) continue;
    const finishedBehind = behind.filter((r) => r.status !== 'running').length;
    const runningBehind = behind.length - finishedBehind;
    if (finishedBehind < tuning.pendingFailureDepth && runningBehind > 0) continue;
    const detail = run.failedChecks.length > 0 ? run.failedChecks.join(', ') : undefined;
    const reason = run.failureReason ?? 'failed_tests';
    if (run.unit.length === 1) {
      const entryId = run.unit[0]?.entryId as string;
      if (retry(ctx, run, entryId, reason, detail)) continue;
      ctx.conclude(entryId, 'FAILED', reason, detail);
      continue;
    }
    bisect(ctx, run);
  }
  // A probe that failed, adopted as a part just now (probes.ts), is split before anything is built on it; judged only
  // while it still tests what the queue would (another batch's split may have moved places since its adoption).
  if (state.runs.some((r) => r.status === 'failed' && !failed.includes(r))) {
    reconcile(ctx);
    decideFailures(ctx);
  }
}

/**
 * Splits a failed batch into parts tested again. A PR the failure makes likely
 * to break is a part of its own: the runs behind are built without it, so it
 * must not share a run (and a merge) with PRs they are built on. Fixed tuning
 * splits it into as many parts as may be tested at once (at least two);
 * adaptive tuning packs the parts by what the failure says of each PR
 * (packParts).
 */
function bisect(ctx: DecisionContext, run: EngineRun): void {
  blameFailedBatch(ctx, run);
  const halves = ctx.state.config.tuning === 'adaptive' ? packParts(ctx, run) : evenParts(ctx, run);
  ctx.dropRun(run, 'bisecting');
  ctx.emit({ type: 'pull_request_batch.failed', prNumbers: run.unit.map((h) => ctx.entry(h.entryId)?.prNumber ?? 0), runId: run.id, reason: 'failed_tests' });
  halves.forEach((heads, i) => {
    for (const head of heads) {
      const entry = ctx.entry(head.entryId);
      if (!entry) continue;
      ctx.entryChanged();
      entry.unitKey = `${run.id}.${i}`;
      entry.bisection = true;
      ctx.hint(entry.id, 'bisecting');
    }
  });
  // Parts already tested (or testing) ahead of the failure in idle slots take their probes' results: once the parts
  // have their places, and only a probe tested on what its part is tested on now.
  adoptProbes(ctx, run, halves);
}

/** Parts of even size, in the batch's order, as many as bisectionConcurrency (at least two); a PR likely to break alone. */
function evenParts(ctx: DecisionContext, run: EngineRun): EngineRun['unit'][] {
  const parts = Math.min(run.unit.length, Math.max(2, tuningOf(ctx.state).bisectionConcurrency));
  const size = Math.ceil(run.unit.length / parts);
  const suspect = (head: EngineRun['unit'][number]) => {
    const entry = ctx.entry(head.entryId);
    return entry !== undefined && likelyToBreak(entry);
  };
  const halves: EngineRun['unit'][] = [];
  let segment: EngineRun['unit'] = [];
  const close = () => {
    for (let i = 0; i < segment.length; i += size) halves.push(segment.slice(i, i + size));
    segment = [];
  };
  for (const head of run.unit) {
    if (!suspect(head)) {
      segment.push(head);
      continue;
    }
    close();
    halves.push([head]);
  }
  close();
  return halves;
}

/**
 * Parts of a failed batch by what the failure says of each PR (its risk after
 * blameFailedBatch): the safest first, each filled, as a batch is, up to the
 * queue's batch pass floor; the PRs now likely to break alone and last. The
 * members' places in line are dealt out again in that order, so the parts
 * likeliest to pass come first and the runs behind are built on them, and a
 * suspect's failure sinks nothing behind it. Fewer runs than even parts: a
 * batch of safe PRs and one suspect is split in two, not four. On seeds 6-15
 * (bench/queue-tune-default.ts), against four even parts: mean p95 in queue
 * (a) 153 → 150 min (worst seed 6.36x → 4.86x the oracle's), (b) 76 → 69
 * (ahead of every peer on p95 on 7 → 9 seeds), (c) 92 → 90, (e) 484 → 460;
 * (d) 749 → 757 and (f) 556 → 576 (this change alone; its rate wins moved
 * (a) 9 → 8 of 10 seeds, (b) 8 → 9, (c) 9 → 10, by hairs either way).
 */
function packParts(ctx: DecisionContext, run: EngineRun): EngineRun['unit'][] {
  const tuning = tuningOf(ctx.state);
  const members = run.unit.map((head, i) => ({ head, i, entry: ctx.entry(head.entryId) })).filter((m): m is { head: EngineRun['unit'][number]; i: number; entry: EngineEntry } => m.entry !== undefined);
  const parts = packByRisk(
    members.map((m) => ({ ...m, risk: breakChance(m.entry, tuning) })),
    tuning.batchPassFloor ?? 1,
  );
  const places = members.map((m) => m.entry.place).filter((p): p is number => p !== null).sort((a, b) => a - b);
  if (places.length === members.length) parts.flat().forEach((m, i) => (m.entry.place = places[i] as number));
  return parts.map((part) => part.map((m) => m.head));
}

/**
 * packParts' packing, on given risks (also used to foresee the parts of a
 * batch still in flight, probes.ts): the safest first, each part filled up to
 * the pass floor; a PR likely to break alone, last.
 */
export function packByRisk<M extends { i: number; risk: number }>(members: M[], floor: number): M[][] {
  const sorted = [...members].sort((a, b) => a.risk - b.risk || a.i - b.i);
  const parts: M[][] = [];
  let current: M[] = [];
  let pass = 1;
  const alone: M[][] = [];
  for (const m of sorted) {
    // Likely to break: a part of its own, as the runs behind are built without it.
    if (m.risk >= LIKELY_BREAK) {
      alone.push([m]);
      continue;
    }
    if (current.length > 0 && pass * (1 - m.risk) < floor) {
      parts.push(current);
      current = [];
      pass = 1;
    }
    current.push(m);
    pass *= 1 - m.risk;
  }
  if (current.length > 0) parts.push(current);
  parts.push(...alone);
  return parts;
}

/**
 * With adaptive tuning, a PR that fails alone though its risk (its hint or its
 * author's record; a PR with neither is not retried, the queue's rate says
 * nothing about it) was below this is tested once more before it is ejected:
 * its failure may as well be a flake.
 * The retry is set apart (likely to break), so runs behind do not bet on it;
 * if it passes, it is tested once more on top of them (risk.ts). On the tuning
 * seeds 6-15 of bench/queue-tune-default.ts, 0.15 raised the seeds where ours
 * is ahead on merged/h in (a) from 7 to 10 of 10, (b) 4 to 7, (c) 7 to 9,
 * (f) 9 to 10 and (g) 9 to 10, for a mean p95 in queue 16 min longer in (a)
 * and 9 in (b) (0.1 and 0.25 measured alike; a retry kept in the chain instead
 * of set apart cost (b) 20 min of p95).
 * A PR of a failed batch (a bisection part) is not retried: its failure alone
 * is the second that points at it, no flake. On seeds 6-15 this took (g), 10 %
 * flaky runs, from a mean p95 of 247 to 210 min (ahead of every peer on
 * merged/h on 9 → 10 seeds); (a) and (b) did not move. Unless a passed run
 * held it (EngineEntry.vouched): then it is retried once, whatever its risk or
 * part, and (unless a failed batch's blame made it likely to break) stays in
 * the chain; the runs built on it stand meanwhile (order.ts vouchedRetryDue),
 * so a passed run that vouched for it is not tested again.
 */
const FLAKE_RETRY_BELOW = 0.15;

/**
 * Flake tolerance (retryFailedTests): a PR whose own run failed its checks is
 * tested again, up to the queue's number of retries, before it is ejected. A
 * conflict or a time-out is not retried: running it again would say the same.
 */
function retry(ctx: DecisionContext, run: EngineRun, entryId: string, reason: string, detail: string | undefined): boolean {
  const entry = ctx.entry(entryId);
  const done = entry?.retries ?? 0;
  const adaptive = ctx.state.config.tuning === 'adaptive';
  // A PR a passed run held is unlikely to break: its failure alone is likelier a flake's than its own (unless what
  // landed since is at odds with it, which its retry then says).
  const vouched = entry !== undefined && vouchedRetryDue(ctx.state, entry, run);
  const likelyFlake = vouched || (entry?.risk !== undefined && done === 0 && !entry.bisection && adaptive && entry.risk < FLAKE_RETRY_BELOW);
  const allowed = Math.max(ctx.state.config.retryFailedTests ?? 0, likelyFlake ? 1 : 0);
  if (!entry || reason !== 'failed_tests' || done >= allowed) return false;
  entry.retries = done + 1;
  // Tested again apart: the runs behind are built without it, as its failure said they should. Not a PR a passed
  // run held: the runs behind are built on it again.
  if (likelyFlake && !vouched) entry.risk = LIKELY_BREAK;
  ctx.entryChanged();
  ctx.hint(entry.id, 'retried', `retry ${done + 1} of ${allowed}${detail ? ` after: ${detail}` : ''}`);
  ctx.dropRun(run, 'retried');
  return true;
}

/**
 * What a failed batch says about its PRs (adaptive tuning): at least one of
 * them breaks, so each is now as likely to break as P(it breaks | the batch
 * failed) = r / (1 - the chance they all pass), from the risks the batch was
 * formed with. A part likely to break is then left out of the runs behind it
 * (order.ts expectedToMerge) instead of sinking them all.
 */
function blameFailedBatch(ctx: DecisionContext, run: EngineRun): void {
  if (ctx.state.config.tuning !== 'adaptive') return;
  const tuning = tuningOf(ctx.state);
  const all = run.unit.map((h) => ctx.entry(h.entryId)).filter((e) => e !== undefined);
  const passChance = (members: EngineEntry[]) => members.reduce((chance, e) => chance * (1 - breakChance(e, tuning)), 1);
  // PRs a passed run held take no blame, unless none of the others could have failed it.
  const suspects = all.filter((e) => !e.vouched);
  const entries = passChance(suspects) < 1 ? suspects : all;
  const allPass = passChance(entries);
  if (allPass >= 1) return;
  for (const entry of entries) entry.risk = Math.min(1, breakChance(entry, tuning) / (1 - allPass));
}
