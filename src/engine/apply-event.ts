import { assertNever } from './assert-never.js';
import { assessRisk } from './author-risk.js';
import type { DecisionContext } from './context.js';
import { blockLanding, runReportedDuringTry } from './landing-block.js';
import { headOf, normalizeBase, token } from './content.js';
import type { EngineEntry, EngineEvent, EngineRun, EngineState, HostOutageCause, PrFacts } from './model.js';
import { modeRunsUndecided } from './mode-switch.js';
import { runOf } from './order.js';
import { finishProbe, forgetProbe, runsAndProbes } from './probes.js';

/** Records what happened. Consequences (runs, merges) are settled afterwards. */
export function applyEvent(ctx: DecisionContext, event: EngineEvent): void {
  const { state } = ctx;
  switch (event.type) {
    case 'submitted': {
      const existing = ctx.entry(event.entryId);
      if (existing) {
        existing.priority = event.priority;
        existing.noBatch = event.noBatch;
        if (event.risk !== undefined) takeHint(state, existing, event.risk);
        return;
      }
      state.entries.push({
        id: event.entryId,
        prNumber: event.prNumber,
        state: 'NOT_READY',
        priority: event.priority,
        noBatch: event.noBatch,
        submittedAt: ctx.now,
        facts: event.facts && withoutReadOnlyFacts(event.facts),
        targets: event.targets ?? null,
        unitKey: null,
        bisection: false,
        admittedAt: null,
        place: null,
        ...(event.risk !== undefined ? { risk: event.risk, hint: event.risk } : {}),
        ...(event.headSha ? { submittedHead: event.headSha } : {}),
        ...(event.label ? { submittedByLabel: { label: event.label, at: ctx.now } } : {}),
      });
      ctx.noteAdded(event.entryId);
      assessRisk(state, state.entries.at(-1) as EngineEntry);
      ctx.hint(event.entryId, 'submitted');
      ctx.emit({ type: 'pull_request.submitted', prNumbers: [event.prNumber] });
      // Pushed to between the submission (a label on one head) and the facts it came with.
      if (event.headSha && event.facts && event.facts.headSha !== event.headSha) ctx.conclude(event.entryId, 'CANCELLED', 'pushed_to');
      return;
    }
    case 'priority_changed': {
      const entry = ctx.entry(event.entryId);
      if (!entry) return;
      entry.priority = event.priority;
      entry.noBatch = event.noBatch;
      if (event.risk !== undefined) takeHint(state, entry, event.risk);
      return;
    }
    case 'cancelled':
      ctx.conclude(event.entryId, 'CANCELLED', 'user_requested');
      return;
    case 'restart_requested':
      restart(ctx, event.entryId, event.requestId);
      return;
    case 'impacted_targets_set': {
      const entry = ctx.entryByPr(event.prNumber);
      // For the head known (its facts, else the head its submission named); with neither, any upload is taken.
      const head = entry?.facts?.headSha ?? entry?.submittedHead;
      if (entry && (!head || head === event.targets.sha)) {
        entry.targets = event.targets;
        ctx.admissionInputsChanged(entry);
      }
      return;
    }
    case 'pr_facts_changed':
      applyFacts(ctx, event);
      return;
    case 'run_finished': {
      if (finishProbe(ctx, event.runId, event.passed, [...(event.failedChecks ?? [])], event.conflictEntryId !== undefined)) return;
      const run = state.runs.find((r) => r.id === event.runId);
      if (!run || run.status !== 'running') return; // Stale: the run was cancelled or replaced.
      run.finishedAt = ctx.now;
      ctx.progressed = true;
      if (event.conflictEntryId && run.unit.concat(run.ahead).some((h) => h.entryId === event.conflictEntryId)) {
        // Only the conflicting PR fails; everything else is rebuilt without it.
        run.status = 'failed';
        ctx.conclude(event.conflictEntryId, 'FAILED', 'merge_conflict');
        const stillThere = state.runs.find((r) => r === run);
        if (stillThere) ctx.dropRun(run, 'rebuilt');
        return;
      }
      run.status = event.passed ? 'passed' : 'failed';
      runReportedDuringTry(state, run);
      if (event.passed) vouchFor(ctx, run);
      run.failedChecks = event.passed ? [] : [...(event.failedChecks ?? [])];
      run.failureReason = event.passed ? null : 'failed_tests';
      return;
    }
    case 'merge_finished': {
      const run = state.runs.find((r) => r.id === event.runId);
      if (state.mergingRunId !== event.runId || !run) return;
      state.mergingRunId = null;
      const pending = state.pendingBaseSha ?? null;
      const pendingLanding = state.pendingBaseLanding === true;
      state.pendingBaseSha = null;
      state.pendingBaseLanding = false;
      // A landing's push counts only as this merge's result; any other landing's (an earlier one, late) says only
      // that the head is to be read.
      const ownLanding = pendingLanding && event.ok && pending === event.newBaseSha;
      if (pendingLanding && !ownLanding) state.awaitingBaseHead = true;
      const reported = pendingLanding ? null : pending;
      if (!event.ok) {
        // Not landed: what ended its PRs while it was carried out ends them now.
        for (const head of [...run.ahead, ...run.unit]) {
          const ended = ctx.entry(head.entryId)?.unlessLanded;
          if (ended) ctx.conclude(head.entryId, ended.state, ended.reason, ended.detail);
          // Merged outside the queue meanwhile: the run tested it with the others, who are tested again without it (a
          // MERGED conclusion keeps a run; found by review).
          if (ended?.state === 'MERGED' && state.runs.includes(run)) ctx.dropRun(run, 'rebuilt');
        }
        if (event.reason === 'refused') ctx.conclude(event.entryId, 'FAILED', 'merge_refused', event.message, run);
        if (event.reason === 'blocked') {
          // The passed run stays valid: it lands, untested again, once the block is lifted or tried again (refused at two
          // tries, it is built again once). Its PRs ended meanwhile, it is gone, and the refusal still says the host would
          // refuse the next landing (found by review: the next run was tested in full, only to be refused then).
          if (blockLanding(ctx, event.message, { kind: 'land', run }) && state.runs.includes(run)) ctx.dropRun(run, 'rebuilt');
        } else {
          if (event.reason === 'base_moved') {
            if (event.onlyTested) state.landsOnlyTested = true;
            // The host found the branch elsewhere than the engine expects (it checks before landing): the head read next
            // (the runner reads it after this refusal) is the branch's, even one the queue's own landings replaced
            // (someone reset the branch back to it). Nothing starts or lands before it, so no merge takes that read as
            // pending; a head read during the merge (`reported`) is applied below as any read, not believed.
            state.awaitingBaseHead = true;
            state.baseHeadDisputed = true;
          }
          if (state.runs.includes(run)) ctx.dropRun(run, 'rebuilt');
        }
        if (reported) moveBase(ctx, reported);
        return;
      }
      // The branch now holds every head the run applied, even of a PR cancelled meanwhile.
      const base = state.baseSha ? (state.knownBases[state.baseSha] ?? { root: state.baseSha, heads: [] }) : { root: event.newBaseSha, heads: [] };
      const added = [...run.ahead, ...run.unit].map((h) => `${h.entryId}@${h.headSha}`).filter((t) => !base.heads.includes(t));
      state.knownBases[event.newBaseSha] = { root: base.root, heads: [...base.heads, ...added] };
      if (state.baseSha && state.baseSha !== event.newBaseSha) state.replacedBases = [...(state.replacedBases ?? []), state.baseSha].slice(-REPLACED_BASES_KEPT);
      state.baseSha = event.newBaseSha;
      state.runs = state.runs.filter((r) => r !== run);
      state.landingBlocked = null; // Landed: whatever refused before lets the queue land now.
      const merged = [...run.ahead, ...run.unit].filter((h) => ctx.entry(h.entryId));
      if (run.unit.length > 1) {
        const prNumbers = merged.map((h) => ctx.entry(h.entryId)?.prNumber).filter((n): n is number => n !== undefined);
        ctx.emit({ type: 'pull_request_batch.merged', prNumbers, runId: run.id, isBisection: run.isBisection });
      }
      for (const head of merged) {
        // Their own runs (if an optimistic merge overtook them) are moot now.
        const own = runOf(state, head.entryId);
        if (own) ctx.dropRun(own, 'merged');
        // Pushed to while it landed: the head tested landed, the commits pushed since did not (the PR stays open on
        // GitHub), and the queue says so rather than nothing.
        const pushed = ctx.entry(head.entryId)?.unlessLanded?.reason === 'pushed_to';
        ctx.conclude(head.entryId, 'MERGED', 'merged', pushed ? landedBeforePush(head.headSha) : undefined, run);
      }
      pruneKnownBases(ctx);
      // A head read while the merge was in flight that is not the merge's own result: the branch moved besides.
      if (reported && reported !== event.newBaseSha) moveBase(ctx, reported);
      return;
    }
    case 'base_moved':
      // Our own merge's push can be reported before its outcome: decide once the outcome is known.
      if (state.mergingRunId) {
        state.pendingBaseSha = event.sha;
        state.pendingBaseLanding = event.landing === true;
      } else if (event.landing) {
        // A landing's push with no merge in flight: late, or delivered again. Not the head unless the base is there.
        if (event.sha !== state.baseSha) state.awaitingBaseHead = true;
      } else {
        state.awaitingBaseHead = false;
        const disputed = state.baseHeadDisputed === true;
        delete state.baseHeadDisputed;
        moveBase(ctx, event.sha, disputed);
      }
      return;
    case 'branch_rewound':
      state.baseHeadDisputed = true;
      state.awaitingBaseHead = true;
      return;
    case 'landing_impossible': {
      // Nobody's verdict: the run goes back untested and nothing starts or lands until the block is lifted or tried.
      // Late, for a run or probe already gone, it says nothing more (found by review: it blocked again a queue an
      // operator had just changed, or counted tries).
      const run = state.runs.find((r) => r.id === event.runId && r.status === 'running');
      const probe = state.probes?.find((p) => p.id === event.runId);
      const refused = run ?? probe;
      if (!refused) return;
      blockLanding(ctx, event.message, { kind: 'build', run: refused });
      if (forgetProbe(ctx, event.runId)) return;
      if (run) ctx.dropRun(run, 'rebuilt');
      return;
    }
    case 'run_not_started': {
      if (event.headChanged) awaitFacts(ctx, event.runId, event.headChanged.entryId);
      if (forgetProbe(ctx, event.runId)) return;
      const run = state.runs.find((r) => r.id === event.runId);
      if (run?.status !== 'running') return;
      if (event.refused && ctx.entry(event.refused.entryId)) ctx.conclude(event.refused.entryId, 'FAILED', 'merge_refused', event.refused.message, run);
      if (state.runs.includes(run)) ctx.dropRun(run, 'rebuilt');
      return;
    }
    case 'config_changed': {
      const currentMode = state.config.mode;
      state.requestedState = event.requestedState;
      ctx.allAdmissionInputsChanged(); // The mode or merge method may admit or demote any PR.
      // An operator changed the queue after a blocked landing: try landing again (and untested landings again too).
      state.landingBlocked = null;
      delete state.landsOnlyTested;
      const busy = modeRunsUndecided(state);
      if (event.config.mode !== currentMode && busy) {
        // Runs in flight (or passed, waiting to land) were built for the current mode: it stays until they are decided
        // (the queue's steps end the switch: settle endModeSwitch).
        state.config = { ...event.config, mode: currentMode };
        state.switchingToMode = event.config.mode;
      } else {
        state.config = event.config;
        state.switchingToMode = null;
      }
      return;
    }
    case 'host_unavailable': {
      const causes = new Set(outageCauses(state.hostOutage));
      causes.add(event.cause ?? 'actions');
      state.hostOutage = { since: state.hostOutage?.since ?? ctx.now, message: event.message, causes: [...causes].sort() };
      return;
    }
    case 'host_recovered': {
      const outage = state.hostOutage;
      if (!outage) return;
      const remaining = event.cause ? outageCauses(outage).filter((cause) => cause !== event.cause) : [];
      if (remaining.length > 0) {
        state.hostOutage = { ...outage, causes: remaining };
        return;
      }
      // Results could not be read during the outage: it does not count toward test timeouts.
      for (const run of runsAndProbes(state)) if (run.status === 'running') run.startedAt += Math.max(0, ctx.now - outage.since);
      state.hostOutage = null;
      return;
    }
    case 'tick':
      return;
    default:
      assertNever(event);
  }
}

/** Every PR of a passed run, ahead of its own PRs too, passed with it (adaptive tuning: see EngineEntry.vouched). */
function vouchFor(ctx: DecisionContext, run: EngineRun): void {
  if (ctx.state.config.tuning !== 'adaptive') return;
  for (const head of [...run.ahead, ...run.unit]) {
    const entry = ctx.entry(head.entryId);
    // Only for the head it tested: a PR pushed to (a new attempt) since is not what passed.
    if (!entry || entry.vouched || token(head) !== token(headOf(entry))) continue;
    entry.vouched = true;
    ctx.entryChanged();
  }
}

/**
 * The host did not find the head the run applied for this PR: no run with it starts until its facts are read again
 * (EngineEntry.awaitingFacts). Only for a run (or probe) still running with the head the entry has: a late report,
 * or one for a head its facts already moved on from, says nothing of the head it has now.
 */
function awaitFacts(ctx: DecisionContext, runId: string, entryId: string): void {
  const run = runsAndProbes(ctx.state).find((r) => r.id === runId);
  const entry = ctx.entry(entryId);
  if (run?.status !== 'running' || !entry) return;
  const applied = [...run.ahead, ...run.unit].find((head) => head.entryId === entryId);
  if (applied && token(applied) === token(headOf(entry))) entry.awaitingFacts = true;
}

/** What reported an outage (one saved before causes were kept came from the runner's actions). */
function outageCauses(outage: EngineState['hostOutage']): HostOutageCause[] {
  if (!outage) return [];
  return outage.causes ?? ['actions'];
}

function restart(ctx: DecisionContext, entryId: string, requestId: string | undefined): void {
  const entry = ctx.entry(entryId);
  const run = runOf(ctx.state, entryId);
  if (!entry || !run || run.status === 'passed' || (requestId !== undefined && entry.restartedFor === requestId)) return;
  if (requestId !== undefined) entry.restartedFor = requestId;
  // Same content, same place in the chain: only this run is replaced.
  if (run.status === 'running') ctx.actions.push({ type: 'cancel_run', runId: run.id });
  const replacement = { ...run, id: `r${ctx.state.nextRunSeq++}`, status: 'running' as const, startedAt: ctx.now, finishedAt: null, failedChecks: [], failureReason: null };
  ctx.state.runs = ctx.state.runs.map((r) => (r === run ? replacement : r));
  ctx.actions.push({ type: 'start_run', run: replacement });
  for (const head of run.unit) ctx.hint(head.entryId, 'restart_requested');
}

function applyFacts(ctx: DecisionContext, event: Extract<EngineEvent, { type: 'pr_facts_changed' }>): void {
  const entry = ctx.entryByPr(event.prNumber);
  if (!entry) return;
  const previous = entry.facts;
  if (event.merged) {
    // GitHub marks a PR merged once its head is in the branch, the queue's own landing too, and that read (the `closed`
    // webhook) may come before the landing's answer (found by review: the queue's own merge was reported as outside
    // it, without its run or its author's credit). The landing decides; if it did not land, someone else merged it.
    if (ctx.inLandingInFlight(entry.id)) {
      entry.unlessLanded = { state: 'MERGED', reason: 'merged_outside_queue' };
      return;
    }
    return ctx.conclude(entry.id, 'MERGED', 'merged_outside_queue');
  }
  if (!event.facts.open) return ctx.conclude(entry.id, 'CANCELLED', 'closed');
  const queued = entry.state !== 'NOT_READY';
  // A push cancels a submission whatever its state: what was submitted (by a label or command from someone allowed to,
  // or by CI) is the head it had, not what its author pushes next (admitted later, the new head would be tested and
  // landed on an approval it never had). Before its first facts, the head its sender named, if any, is that head.
  const submittedHead = previous?.headSha ?? entry.submittedHead;
  if (submittedHead && submittedHead !== event.facts.headSha) return ctx.conclude(entry.id, 'CANCELLED', 'pushed_to');
  if (queued && event.facts.baseBranch !== ctx.state.targetBranch) return ctx.conclude(entry.id, 'CANCELLED', 'base_changed');
  if (queued && event.facts.draft) return ctx.conclude(entry.id, 'CANCELLED', 'converted_to_draft');
  // Queued by a label: the first read made since says whether the PR still has it (its label's delivery may have come
  // after the removal's). A read begun before the submission says nothing of it.
  const byLabel = entry.submittedByLabel;
  if (byLabel && event.facts.labels && event.facts.readAt !== undefined && event.facts.readAt >= byLabel.at) {
    if (!event.facts.labels.includes(byLabel.label)) return ctx.conclude(entry.id, 'CANCELLED', 'user_requested', `the ${byLabel.label} label is no longer on the pull request`);
    delete entry.submittedByLabel;
  }
  // Read since the host did not find its head: the head it has now (this one, or it would have ended above) may be built.
  delete entry.awaitingFacts;
  entry.facts = withoutReadOnlyFacts(event.facts);
  ctx.admissionInputsChanged(entry);
  // Facts read after the submission: the first to name the author.
  if (!previous) assessRisk(ctx.state, entry);
}

/**
 * A client's new hint for a PR already in line replaces what it had, and is weighed by its author's and size's
 * records like one given at submission. The same hint again (a retried submit) changes nothing: neither weighed again
 * against records that moved since, nor undoing what its runs said (a pass that answered a bet, a failed batch's blame).
 */
function takeHint(state: EngineState, entry: EngineEntry, hint: number): void {
  if (entry.hint === hint) return;
  entry.risk = hint;
  entry.hint = hint;
  assessRisk(state, entry);
}

/** Facts as an entry keeps them: labels and the read's time only matter as they are read (applyFacts), and would grow the state. */
function withoutReadOnlyFacts(facts: PrFacts): PrFacts {
  if (facts.labels === undefined && facts.readAt === undefined) return facts;
  const { labels: _labels, readAt: _readAt, ...kept } = facts;
  return kept;
}

/** How many heads the queue's own merges replaced are remembered as stale. */
const REPLACED_BASES_KEPT = 20;

/**
 * The branch is at `sha` now, unless that is a head the queue's own merges already replaced (a late report), or
 * `trusted`: a read after the host refused to land from the head the engine expected, which is the branch's head
 * even when it is a replaced one (the branch was reset to it).
 */
function moveBase(ctx: DecisionContext, sha: string, trusted = false): void {
  const { state } = ctx;
  const replaced = state.replacedBases ?? [];
  if (sha === state.baseSha || (!trusted && replaced.includes(sha))) return;
  if (replaced.includes(sha)) {
    // Reset back: the heads replaced since are no longer stale reports of the past but heads the branch may reach
    // again; only those before it still are.
    const kept = replaced.slice(0, replaced.indexOf(sha));
    if (kept.length > 0) state.replacedBases = kept;
    else delete state.replacedBases;
  }
  // The branch moved by itself (the queue's own landings set the base in merge_finished, not here): what passed on
  // the old one says less of the new, where a PR vouched for may be at odds with what was pushed. Its failure is then
  // judged as any PR's (failures.ts retry).
  forgetVouches(ctx);
  state.baseSha = sha;
  pruneKnownBases(ctx);
}

function forgetVouches(ctx: DecisionContext): void {
  for (const entry of ctx.state.entries) {
    if (!entry.vouched) continue;
    delete entry.vouched;
    ctx.entryChanged();
  }
}

/**
 * Keeps only the known bases a run or the branch still refers to, and folds the heads they all begin with into
 * their root. A known base lists every head the queue landed since the branch last moved by itself: on a queue
 * that lands all day that list grew with every landing, and so did each check of a run's validity (a pass over it
 * per head, in parallel queues) and each snapshot. Which bases are the same content, and which heads one holds
 * beyond another, is all the engine asks of them, and a prefix every base in use shares changes neither answer:
 * every head of a base comes after that prefix only once (a landing adds the heads its base lacks), and a run's
 * heads are never in its own base.
 */
function pruneKnownBases(ctx: DecisionContext): void {
  const { state } = ctx;
  const used = new Set([state.baseSha, ...state.runs.map((r) => r.baseSha)]);
  state.knownBases = Object.fromEntries(Object.entries(state.knownBases).filter(([sha]) => used.has(sha)));
  if (!state.baseSha) return;
  const root = normalizeBase(state, state.baseSha).root;
  // Bases on another root are never valid again (the branch moved by itself since): left as they are.
  const sharing = [...used].flatMap((sha) => {
    const base = sha ? normalizeBase(state, sha) : undefined;
    return base && base.root === root ? [base] : [];
  });
  const prefix = commonPrefixLength(sharing.map((b) => b.heads));
  if (prefix === 0) return;
  const folded = foldedRoot(root, sharing[0]?.heads.slice(0, prefix) ?? []);
  for (const [sha, base] of Object.entries(state.knownBases)) {
    if (base.root === root) state.knownBases[sha] = { root: folded, heads: base.heads.slice(prefix) };
  }
}

/**
 * The root of a branch head R with k heads landed on it, as `R+k:<the last of them>`: a root the branch reaches
 * again by itself is not taken for it, and folding a folded root again keeps it as short (R and the count carry).
 */
function foldedRoot(root: string, heads: readonly string[]): string {
  const plus = root.indexOf('+');
  const sha = plus < 0 ? root : root.slice(0, plus);
  const landedBefore = plus < 0 ? 0 : Number.parseInt(root.slice(plus + 1), 10);
  return `${sha}+${landedBefore + heads.length}:${heads.at(-1)}`;
}

function commonPrefixLength(lists: readonly string[][]): number {
  const [first, ...rest] = lists;
  if (!first) return 0;
  let length = first.length;
  for (const list of rest) {
    let i = 0;
    while (i < length && i < list.length && list[i] === first[i]) i++;
    length = i;
  }
  return length;
}

/** What a merged PR's status says when it was pushed to while it landed. */
function landedBeforePush(headSha: string): string {
  return `The head the queue tested, ${headSha.slice(0, 7)}, landed; commits pushed to the pull request while it landed did not. Submit it again to land them.`;
}
