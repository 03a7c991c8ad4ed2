import { isTerminal } from '../domain/pull-request-state.js';
import { TIMED_OUT_PREFIX, type QueueEntryRecord, type QueueRecord, type TestedPullRequest, type TestRunRecord } from '../domain/records.js';
import type { AppliedHead, EngineAction, EngineRun } from '../engine/model.js';
import type { GitHost, GitHostRegistry, MergeOutcome, TestedHead } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import type { RunnerLog } from './queue-runner.js';
import type { Timers } from './timers.js';
import type { WebhookOutbox } from '../ports/webhook-outbox.js';
import type { RunnerAction, RunnerInput } from './runner-model.js';
import { engineFacts, engineTargets } from './engine-inputs.js';

/** What carrying out a queue's actions needs. */
export interface ActionContext {
  queue: QueueRecord;
  stores: Stores;
  hosts: GitHostRegistry;
  log: RunnerLog;
  timers: Timers;
  now: () => number;
  /** Where emitted events go out as webhooks, when configured. */
  outbox?: WebhookOutbox;
  /** Records what a host answered for the queue's writer (the inbox); never decides itself. */
  report(input: RunnerInput): Promise<void>;
  /** Asks the writer to decide again (a timer fired). */
  wake(): void;
  /** The PR's 1-based place in line, from the engine's current state. */
  positionOf(entryId: string): number | undefined;
  /** The PR of an entry the engine still holds, and its head as the engine knows it (null: not read yet). */
  queuedPullRequest?(entryId: string): { prNumber: number; headSha: string | null } | undefined;
  /** When the PR is forecast to merge (epoch ms), from the engine's current state and the queue's recent CI; undefined when not forecast. */
  estimatedMergeAt?(entryId: string): Promise<number | undefined>;
}

/** Whether the action calls the host (carried out in the background, retried through outages). */
export function isHostAction(action: RunnerAction): boolean {
  switch (action.type) {
    case 'publish_status':
    case 'start_run':
    case 'cancel_run':
    case 'merge':
    case 'refresh_pull_request':
    case 'read_base_head':
      return true;
    default:
      return false;
  }
}

/**
 * Carries out one host action. Each is safe to repeat: runs are found by the
 * engine's run id before one is created, hosts treat repeated calls as one,
 * a merge asked again answers what it did. What the engine must hear about
 * goes to the queue's inbox, never straight to decide(). Throws on host
 * failures (the caller retries them); refusals come back as values.
 * `again`: the same action was carried out before and failed transiently, or a
 * previous writer's answers to it were lost (it may have got partly through; a
 * merge tells the host so).
 */
export async function executeHostAction(ctx: ActionContext, action: RunnerAction, again = false): Promise<void> {
  switch (action.type) {
    case 'publish_status':
      return showOnPullRequest(ctx, action);
    case 'start_run':
      return startRun(ctx, action.run);
    case 'cancel_run':
      return cancelRun(ctx, action.runId);
    case 'merge':
      return merge(ctx, action, again);
    case 'refresh_pull_request':
      return refreshPullRequest(ctx, action.prNumber);
    case 'read_base_head': {
      const head = await hostOf(ctx)?.readBranchHead(ctx.queue.repo, ctx.queue.targetBranch);
      if (head) await ctx.report({ type: 'base_moved', sha: head });
      return;
    }
    default:
      return;
  }
}

/**
 * A host refused an action for good (a 4xx that is not a rate limit): the
 * engine hears a verdict where one exists; other actions are only logged.
 */
export async function settleRefusal(ctx: ActionContext, action: RunnerAction, error: unknown): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  ctx.log.error({ err: error, queueId: ctx.queue.id, action: action.type }, 'the host refused a queue action');
  if (action.type === 'start_run') {
    // The host would not build the run: the App may not (a permission, an installation setting), or a ruleset or protection
    // refuses the queue's branches (creating mq/*, force-pushing mq-staging/*). No PR's fault (a PR whose content conflicts
    // comes back as a merge_conflict, never as a refusal), and every run would be refused alike: the queue waits and says why.
    const record = await ctx.stores.testRuns.findByEngineRunId(ctx.queue.id, action.run.id);
    const blocked =
      statusOf(error) === 403
        ? `GitHub refused the App while starting a test run: ${message}. Check the App's permissions (app.yml lists them), then call updateQueue.`
        : `The host refused to build a test run: ${message}. Let the App create and force-push the queue's branches (mq/<target>/*, mq-staging/<target>; rulesets and branch protection on them must allow it), then call updateQueue.`;
    if (record) await ctx.stores.testRuns.update(record.id, { status: 'cancelled', finishedAt: new Date(ctx.now()), failureStatuses: [blocked] });
    await ctx.report({ type: 'landing_impossible', runId: action.run.id, message: blocked });
  } else if (action.type === 'merge') {
    // A refusal the host adapter did not recognise: rebuilding would be refused again, so the queue stops and says why.
    await ctx.report({ type: 'merge_finished', runId: action.runId, ok: false, reason: 'blocked', message: `the host refused to land the tested commit: ${message}` });
  }
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
}

function hostOf(ctx: ActionContext): GitHost | undefined {
  return ctx.hosts.forHost(ctx.queue.repo.host);
}

async function refreshPullRequest(ctx: ActionContext, prNumber: number): Promise<void> {
  const { stores, queue } = ctx;
  const host = hostOf(ctx);
  if (!host) return;
  const facts = await host.readPullRequest(queue.repo, prNumber);
  const entry = await stores.entries.find(queue.id, prNumber);
  if (!entry || isTerminal(entry.state)) return;
  if (!facts) {
    // The host has no such PR (never had, or it was deleted): for the queue it is closed.
    const gone = { headSha: entry.facts?.headSha ?? '', baseBranch: queue.targetBranch, open: false, draft: false, mergeability: 'unspecified' as const };
    await ctx.report({ type: 'pr_facts_changed', prNumber, facts: gone, merged: false });
    return;
  }
  // Stored by the record step with the decision it leads to, never beside it (see pr_facts_read).
  await ctx.report({ type: 'pr_facts_read', entryId: entry.id, facts, event: { type: 'pr_facts_changed', prNumber, facts: engineFacts(facts), merged: facts.merged } });
  const targets = await engineTargets(stores, queue.id, prNumber, facts.headSha);
  if (targets) await ctx.report({ type: 'impacted_targets_set', prNumber, targets });
}

/** The host shows the new state on the PR itself (a check run, a comment on ejection). */
async function showOnPullRequest(ctx: ActionContext, action: Extract<EngineAction, { type: 'publish_status' }>): Promise<void> {
  const host = hostOf(ctx);
  if (!host) return;
  const { queue, stores } = ctx;
  // An entry the engine still holds is read from its state (a read per status saved); ended ones from the store.
  const pr = ctx.queuedPullRequest?.(action.entryId) ?? (await storedPullRequest(stores, action.entryId));
  if (!pr?.headSha) return;
  // An ended PR, or one not admitted yet (no place in line, no forecast), has neither: not asked, so a status of a PR
  // just submitted does not cost a forecast of the whole queue.
  const placed = !isTerminal(action.state) && action.state !== 'NOT_READY';
  const position = placed ? ctx.positionOf(action.entryId) : undefined;
  const eta = placed ? await ctx.estimatedMergeAt?.(action.entryId) : undefined;
  // Links and failing checks matter once a run decided something; a waiting PR shows its place. The run the engine
  // named is read by its _id; without one (a status decided before actions named it), the PR's latest run is looked for,
  // a query the local FerretDB answers by reading every test run stored.
  const run =
    action.state === 'PENDING' || action.state === 'NOT_READY'
      ? null
      : action.runId
        ? await stores.testRuns.findByEngineRunId(queue.id, action.runId)
        : await stores.testRuns.latestForPr(queue.id, pr.prNumber);
  await host.reportPullRequestStatus({
    repo: queue.repo,
    targetBranch: queue.targetBranch,
    prNumber: pr.prNumber,
    headSha: pr.headSha,
    state: action.state,
    reason: action.reason,
    ...(action.detail ? { detail: action.detail } : {}),
    ...(position ? { position } : {}),
    ...(eta !== undefined ? { estimatedMergeAt: new Date(eta) } : {}),
    ...(run ? { testRun: { runId: run.id, testBranch: run.testBranch, failedChecks: run.failureStatuses } } : {}),
    statusCheckEnabled: queue.config.statusCheckEnabled,
    commentsEnabled: queue.config.commentsEnabled,
  });
}

async function storedPullRequest(stores: Stores, entryId: string): Promise<{ prNumber: number; headSha: string | null } | null> {
  const entry: QueueEntryRecord | null = await stores.entries.findById(entryId);
  return entry ? { prNumber: entry.prNumber, headSha: entry.facts?.headSha ?? null } : null;
}

async function describeHeads(ctx: ActionContext, heads: AppliedHead[]): Promise<TestedPullRequest[]> {
  const described: TestedPullRequest[] = [];
  for (const head of heads) {
    const entry = await ctx.stores.entries.findById(head.entryId);
    described.push({
      entryId: head.entryId,
      prNumber: entry?.prNumber ?? 0,
      headSha: head.headSha,
      ...(entry?.facts?.title ? { title: entry.facts.title } : {}),
      ...(entry?.facts?.url ? { url: entry.facts.url } : {}),
    });
  }
  return described;
}

/** The run's record, created with the decision (database only), so views show it at once. */
export async function recordRunStart(ctx: ActionContext, run: EngineRun): Promise<TestRunRecord> {
  const { stores, queue } = ctx;
  const tested = await describeHeads(ctx, run.unit);
  const dependent = await describeHeads(ctx, run.ahead);
  return stores.testRuns.insert({
    queueId: queue.id,
    engineRunId: run.id,
    status: 'in_progress',
    ...(run.probeOf ? { probeOf: run.probeOf } : {}),
    baseSha: run.baseSha,
    testBranch: `mq/${queue.targetBranch}/${run.id}`,
    testBranchSha: null,
    testedPullRequests: tested,
    dependentPullRequests: dependent,
    isBisection: run.isBisection,
    requiredStatuses: queue.config.requiredStatuses ?? [],
    requiredStatusesSource: queue.config.requiredStatuses ? 'queue' : 'none',
    checkRuns: [],
    statusChecks: [],
    failureStatuses: [],
    impactedTargets: null,
    createdAt: new Date(run.startedAt),
    finishedAt: null,
  });
}

/**
 * Records a run's end without a result, with the decision (the host hears of it in the background); a run that
 * timed out ends failed, and is returned as recorded.
 */
export async function recordRunCancelled(ctx: ActionContext, engineRunId: string, timedOut = false): Promise<TestRunRecord | null> {
  const record = await ctx.stores.testRuns.findByEngineRunId(ctx.queue.id, engineRunId);
  if (record?.status !== 'in_progress') return null;
  const finishedAt = new Date(ctx.now());
  if (!timedOut) {
    await ctx.stores.testRuns.update(record.id, { status: 'cancelled', finishedAt });
    return null;
  }
  // Timed out: its required checks never all reported (results are recorded only when they decide a run).
  const failed = { status: 'failed' as const, finishedAt, failureStatuses: record.requiredStatuses.map((name) => `${TIMED_OUT_PREFIX}${name}`) };
  await ctx.stores.testRuns.update(record.id, failed);
  return { ...record, ...failed };
}

async function startRun(ctx: ActionContext, run: EngineRun): Promise<void> {
  const { stores, queue } = ctx;
  const record = await recordRunStart(ctx, run);
  if (record.status !== 'in_progress') return;
  const dependent = record.dependentPullRequests;
  const tested = record.testedPullRequests;
  const host = hostOf(ctx);
  if (!host) return;
  const heads = await landingHeads(ctx, [...dependent, ...tested]);
  const buildOn = await builtPrefix(ctx, record, run.baseSha);
  const started = await host.startTestRun({
    queueId: queue.id,
    repo: queue.repo,
    targetBranch: queue.targetBranch,
    runId: record.id,
    baseSha: run.baseSha,
    heads,
    ...(queue.config.requiredStatuses ? { requiredStatuses: queue.config.requiredStatuses } : {}),
    createPullRequest: queue.config.createPrsForTestingBranches,
    mergeMethod: queue.config.mergeMethod,
    ...(buildOn ? { buildOn } : {}),
    ...(run.direct ? { direct: true } : {}),
  });
  if (started.ok) {
    await stores.testRuns.update(record.id, {
      testBranch: started.testBranch,
      testBranchSha: started.testBranchSha,
      ...(started.requiredStatuses ? { requiredStatuses: started.requiredStatuses } : {}),
      ...(started.requiredStatusesSource ? { requiredStatusesSource: started.requiredStatusesSource } : {}),
      ...(started.requiredCheckApps?.length ? { requiredCheckApps: started.requiredCheckApps } : {}),
      ...(started.withoutCi ? { landedWithoutCi: started.withoutCi.reason } : {}),
    });
    // Direct merge: the verdict is already in (the PR's own checks), reported as CI results are.
    if (started.withoutCi) {
      await ctx.report({ type: 'test_run_reported', testRunId: record.id, engineRunId: run.id, passed: true, checkRuns: started.withoutCi.checkRuns, failedChecks: [] });
    }
    return;
  }
  const finishedAt = new Date(ctx.now());
  if (started.reason === 'cannot_land' || started.reason === 'no_required_statuses') {
    // Not the PRs' fault (the repository's protection, or no checks named anywhere): the run ends untested and the
    // queue stops landing until an operator acts; the PRs keep their places.
    await stores.testRuns.update(record.id, { status: 'cancelled', finishedAt, failureStatuses: [started.message] });
    await ctx.report({ type: 'landing_impossible', runId: run.id, message: started.message });
    return;
  }
  const culprit = [...dependent, ...tested].find((pr) => pr.prNumber === started.prNumber);
  if (started.reason === 'head_changed') {
    // No verdict: the PR's head is not among its commits (pushed to after the queue read it, or the host's list lags
    // behind). Its facts are read again (a push cancels it) and the run is built again once they are in, instead of
    // the queue testing part of the PR, stopping, or waiting for the run to time out. The engine holds the PR first,
    // then the read is asked for: its facts come after the hold they lift (EngineEntry.awaitingFacts), and no run is
    // built on the head the host did not find meanwhile.
    const message = `#${started.prNumber} was pushed to after the queue read it: not built; its head is read again`;
    await stores.testRuns.update(record.id, { status: 'cancelled', finishedAt, failureStatuses: [message] });
    await ctx.report({ type: 'run_not_started', runId: run.id, ...(culprit ? { headChanged: { entryId: culprit.entryId } } : {}) });
    await ctx.report({ type: 'refresh_pull_request', prNumber: started.prNumber });
    return;
  }
  if (started.reason === 'pr_unbuildable') {
    // That PR's own verdict (the others in the run are built again without it), not a stop for the whole queue.
    await stores.testRuns.update(record.id, { status: 'failed', finishedAt, failureStatuses: [started.message] });
    await ctx.report({ type: 'run_not_started', runId: run.id, ...(culprit ? { refused: { entryId: culprit.entryId, message: started.message } } : {}) });
    return;
  }
  await stores.testRuns.update(record.id, { status: 'failed', finishedAt, failureStatuses: ['merge_conflict'] });
  await ctx.report({ type: 'run_finished', runId: run.id, passed: false, failedChecks: ['merge conflict'], ...(culprit ? { conflictEntryId: culprit.entryId } : {}) });
}

/** The heads a run applies, with what the commits that land say of each PR. */
async function landingHeads(ctx: ActionContext, prs: TestedPullRequest[]): Promise<TestedHead[]> {
  const heads: TestedHead[] = [];
  for (const pr of prs) {
    const facts = (await ctx.stores.entries.findById(pr.entryId))?.facts;
    heads.push({ prNumber: pr.prNumber, headSha: pr.headSha, ...(facts?.title ? { title: facts.title } : {}), ...(facts?.body ? { body: facts.body } : {}) });
  }
  return heads;
}

/**
 * The longest run already built on the same base whose heads begin this run's:
 * a speculative chain then stays one line of history, so once the run ahead
 * lands, this run's commit is still a fast-forward of the branch.
 */
async function builtPrefix(ctx: ActionContext, record: TestRunRecord, baseSha: string): Promise<{ sha: string; heads: number } | undefined> {
  const mine = [...record.dependentPullRequests, ...record.testedPullRequests].map((pr) => `${pr.prNumber}@${pr.headSha}`);
  let best: { sha: string; heads: number } | undefined;
  for (const other of await ctx.stores.testRuns.listBuiltOn(ctx.queue.id, baseSha)) {
    if (other.id === record.id || !other.testBranchSha) continue;
    const theirs = [...other.dependentPullRequests, ...other.testedPullRequests].map((pr) => `${pr.prNumber}@${pr.headSha}`);
    const isPrefix = theirs.length > 0 && theirs.length < mine.length && theirs.every((head, i) => mine[i] === head);
    if (isPrefix && theirs.length > (best?.heads ?? 0)) best = { sha: other.testBranchSha, heads: theirs.length };
  }
  return best;
}

async function cancelRun(ctx: ActionContext, engineRunId: string): Promise<void> {
  const record = await ctx.stores.testRuns.findByEngineRunId(ctx.queue.id, engineRunId);
  if (!record) return;
  await hostOf(ctx)?.cancelTestRun(ctx.queue.repo, record.id);
}

async function merge(ctx: ActionContext, action: Extract<EngineAction, { type: 'merge' }>, again: boolean): Promise<void> {
  const record = await ctx.stores.testRuns.findByEngineRunId(ctx.queue.id, action.runId);
  const host = hostOf(ctx);
  if (!record || !host) {
    const message = !host ? `no adapter is configured for the host ${ctx.queue.repo.host}` : `the record of run ${action.runId} is missing`;
    await ctx.report({ type: 'merge_finished', runId: action.runId, ok: false, reason: 'blocked', message });
    return;
  }
  const heads = [...record.dependentPullRequests, ...record.testedPullRequests]
    .filter((pr) => action.entryIds.includes(pr.entryId))
    .map((pr) => ({ prNumber: pr.prNumber, headSha: pr.headSha }));
  const outcome = await host.merge({
    repo: ctx.queue.repo,
    targetBranch: ctx.queue.targetBranch,
    runId: record.id,
    expectedBaseSha: action.expectedBaseSha,
    heads,
    mergeMethod: ctx.queue.config.mergeMethod,
    ...(again ? { askedAgain: true } : {}),
    runStartedAt: record.createdAt,
  });
  await ctx.report(mergeFinished(action.runId, outcome, record));
  // A PR that closed or moved under the queue: its facts tell the engine what became of it.
  if (!outcome.ok && (outcome.reason === 'pr_closed' || outcome.reason === 'head_changed')) {
    for (const head of heads) await ctx.report({ type: 'refresh_pull_request', prNumber: head.prNumber });
  }
}

/** What the engine hears of a merge: a refused PR is named by its entry. */
function mergeFinished(runId: string, outcome: MergeOutcome, record: TestRunRecord): RunnerInput {
  if (outcome.ok) return { type: 'merge_finished', runId, ok: true, newBaseSha: outcome.newBaseSha };
  if (outcome.reason === 'refused') {
    const refused = [...record.dependentPullRequests, ...record.testedPullRequests].find((pr) => pr.prNumber === outcome.prNumber);
    // A refusal naming a PR the run does not hold is no PR's verdict: the queue stops and says so.
    if (!refused) return { type: 'merge_finished', runId, ok: false, reason: 'blocked', message: `#${outcome.prNumber}: ${outcome.message}` };
    return { type: 'merge_finished', runId, ok: false, reason: 'refused', entryId: refused.entryId, message: outcome.message };
  }
  if (outcome.reason === 'blocked') return { type: 'merge_finished', runId, ok: false, reason: 'blocked', message: outcome.message };
  return { type: 'merge_finished', runId, ok: false, reason: outcome.reason, ...(outcome.onlyTested ? { onlyTested: true as const } : {}) };
}
