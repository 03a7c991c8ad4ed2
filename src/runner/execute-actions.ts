import { isTerminal } from '../domain/pull-request-state.js';
import type { QueueEntryRecord, QueueRecord, TestedPullRequest, TestRunRecord } from '../domain/records.js';
import type { AppliedHead, EngineAction, EngineRun } from '../engine/model.js';
import type { GitHost, GitHostRegistry } from '../ports/git-host.js';
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
 */
export async function executeHostAction(ctx: ActionContext, action: RunnerAction): Promise<void> {
  switch (action.type) {
    case 'publish_status':
      return showOnPullRequest(ctx, action);
    case 'start_run':
      return startRun(ctx, action.run);
    case 'cancel_run':
      return cancelRun(ctx, action.runId);
    case 'merge':
      return merge(ctx, action);
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
    const record = await ctx.stores.testRuns.findByEngineRunId(ctx.queue.id, action.run.id);
    const failedChecks = [`merge-queue: the test run could not be started: ${message}`];
    if (record) await ctx.stores.testRuns.update(record.id, { status: 'failed', finishedAt: new Date(ctx.now()), failureStatuses: failedChecks });
    await ctx.report({ type: 'run_finished', runId: action.run.id, passed: false, failedChecks });
  } else if (action.type === 'merge') {
    await ctx.report({ type: 'merge_finished', runId: action.runId, ok: false, reason: 'merge_failed' });
  }
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
  await stores.entries.setFacts(entry.id, facts);
  await ctx.report({ type: 'pr_facts_changed', prNumber, facts: engineFacts(facts), merged: facts.merged });
  const targets = await engineTargets(stores, queue.id, prNumber, facts.headSha);
  if (targets) await ctx.report({ type: 'impacted_targets_set', prNumber, targets });
}

/** The host shows the new state on the PR itself (a check run, a comment on ejection). */
async function showOnPullRequest(ctx: ActionContext, action: Extract<EngineAction, { type: 'publish_status' }>): Promise<void> {
  const host = hostOf(ctx);
  if (!host) return;
  const { queue, stores } = ctx;
  const entry: QueueEntryRecord | null = await stores.entries.findById(action.entryId);
  if (!entry?.facts) return;
  const position = isTerminal(action.state) ? undefined : ctx.positionOf(entry.id);
  // Links and failing checks matter once a run decided something; a waiting PR shows its place.
  const run = action.state === 'PENDING' || action.state === 'NOT_READY' ? null : await stores.testRuns.latestForPr(queue.id, entry.prNumber);
  await host.reportPullRequestStatus({
    repo: queue.repo,
    targetBranch: queue.targetBranch,
    prNumber: entry.prNumber,
    headSha: entry.facts.headSha,
    state: action.state,
    reason: action.reason,
    ...(action.detail ? { detail: action.detail } : {}),
    ...(position ? { position } : {}),
    ...(run ? { testRun: { runId: run.id, testBranch: run.testBranch, failedChecks: run.failureStatuses } } : {}),
    statusCheckEnabled: queue.config.statusCheckEnabled,
    commentsEnabled: queue.config.commentsEnabled,
  });
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

/** A cancelled run's record says so with the decision; the host hears of it in the background. */
export async function recordRunCancelled(ctx: ActionContext, engineRunId: string): Promise<void> {
  const record = await ctx.stores.testRuns.findByEngineRunId(ctx.queue.id, engineRunId);
  if (record?.status === 'in_progress') await ctx.stores.testRuns.update(record.id, { status: 'cancelled', finishedAt: new Date(ctx.now()) });
}

async function startRun(ctx: ActionContext, run: EngineRun): Promise<void> {
  const { stores, queue } = ctx;
  const record = await recordRunStart(ctx, run);
  if (record.status !== 'in_progress') return;
  const dependent = record.dependentPullRequests;
  const tested = record.testedPullRequests;
  const host = hostOf(ctx);
  if (!host) return;
  const started = await host.startTestRun({
    queueId: queue.id,
    repo: queue.repo,
    targetBranch: queue.targetBranch,
    runId: record.id,
    baseSha: run.baseSha,
    heads: [...dependent, ...tested].map((pr) => ({ prNumber: pr.prNumber, headSha: pr.headSha })),
    ...(queue.config.requiredStatuses ? { requiredStatuses: queue.config.requiredStatuses } : {}),
    createPullRequest: queue.config.createPrsForTestingBranches,
  });
  if (started.ok) {
    await stores.testRuns.update(record.id, {
      testBranch: started.testBranch,
      testBranchSha: started.testBranchSha,
      ...(started.requiredStatuses ? { requiredStatuses: started.requiredStatuses } : {}),
      ...(started.requiredStatusesSource ? { requiredStatusesSource: started.requiredStatusesSource } : {}),
    });
    return;
  }
  const finishedAt = new Date(ctx.now());
  if (started.reason === 'no_required_statuses') {
    await stores.testRuns.update(record.id, { status: 'failed', finishedAt, failureStatuses: [started.message] });
    await ctx.report({ type: 'run_finished', runId: run.id, passed: false, failedChecks: [started.message] });
    return;
  }
  const culprit = [...dependent, ...tested].find((pr) => pr.prNumber === started.prNumber);
  await stores.testRuns.update(record.id, { status: 'failed', finishedAt, failureStatuses: ['merge_conflict'] });
  await ctx.report({ type: 'run_finished', runId: run.id, passed: false, failedChecks: ['merge conflict'], ...(culprit ? { conflictEntryId: culprit.entryId } : {}) });
}

async function cancelRun(ctx: ActionContext, engineRunId: string): Promise<void> {
  const record = await ctx.stores.testRuns.findByEngineRunId(ctx.queue.id, engineRunId);
  if (!record) return;
  await hostOf(ctx)?.cancelTestRun(ctx.queue.repo, record.id);
}

async function merge(ctx: ActionContext, action: Extract<EngineAction, { type: 'merge' }>): Promise<void> {
  const record = await ctx.stores.testRuns.findByEngineRunId(ctx.queue.id, action.runId);
  const host = hostOf(ctx);
  if (!record || !host) {
    await ctx.report({ type: 'merge_finished', runId: action.runId, ok: false, reason: 'merge_failed' });
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
  });
  await ctx.report(outcome.ok ? { type: 'merge_finished', runId: action.runId, ok: true, newBaseSha: outcome.newBaseSha } : { type: 'merge_finished', runId: action.runId, ok: false, reason: outcome.reason });
  // A PR that closed or moved under the queue: its facts tell the engine what became of it.
  if (!outcome.ok && (outcome.reason === 'pr_closed' || outcome.reason === 'head_changed')) {
    for (const head of heads) await ctx.report({ type: 'refresh_pull_request', prNumber: head.prNumber });
  }
}
