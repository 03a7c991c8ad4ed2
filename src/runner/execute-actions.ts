import { isTerminal } from '../domain/pull-request-state.js';
import type { QueueEntryRecord, QueueRecord, TestedPullRequest } from '../domain/records.js';
import type { AppliedHead, EngineAction, EngineEvent, EngineRun } from '../engine/model.js';
import { assertNever } from '../engine/assert-never.js';
import type { GitHost, GitHostRegistry } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import type { QueueRunner, RunnerLog } from './queue-runner.js';
import type { Timers } from './timers.js';
import type { WebhookOutbox } from '../ports/webhook-outbox.js';
import { outgoingEvents } from './webhook-events.js';

/** What carrying out a queue's actions needs. */
export interface ActionContext {
  queue: QueueRecord;
  stores: Stores;
  hosts: GitHostRegistry;
  log: RunnerLog;
  timers: Timers;
  runner: QueueRunner;
  now: () => number;
  /** Where emitted events go out as webhooks, when configured. */
  outbox?: WebhookOutbox;
}

/**
 * Carries out the engine's actions through the ports. Each is safe to repeat:
 * statuses already shown are skipped, runs are found by the engine's run id
 * before one is created, hosts treat repeated calls as one. Outcomes that the
 * engine must hear about go to the queue's inbox, never straight to decide().
 */
export async function executeActions(ctx: ActionContext, actions: EngineAction[]): Promise<void> {
  for (const action of actions) {
    try {
      await execute(ctx, action);
    } catch (error) {
      ctx.log.error({ err: error, queueId: ctx.queue.id, action: action.type }, 'queue action failed');
      await recoverFrom(ctx, action);
    }
  }
}

async function execute(ctx: ActionContext, action: EngineAction): Promise<void> {
  switch (action.type) {
    case 'publish_status':
      return publishStatus(ctx, action);
    case 'start_run':
      return startRun(ctx, action.run);
    case 'cancel_run':
      return cancelRun(ctx, action.runId);
    case 'merge':
      return merge(ctx, action);
    case 'emit':
      ctx.log.info({ queueId: ctx.queue.id, event: action.event }, 'queue event');
      if (ctx.outbox) for (const event of await outgoingEvents(ctx.stores, ctx.queue, action.event, new Date(ctx.now()))) await ctx.outbox.publish(event);
      return;
    case 'wake_at':
      ctx.timers.schedule(ctx.queue.id, action.at, ctx.now(), () => {
        // If the database is down now, the poll loop and the next event wake the queue again.
        ctx.runner.dispatch(ctx.queue.id, { type: 'tick' }).catch((error: unknown) => ctx.log.warn({ err: error, queueId: ctx.queue.id }, 'queue wake-up failed'));
      });
      return;
    default:
      assertNever(action);
  }
}

/** A failed host call must not leave the engine waiting forever. */
async function recoverFrom(ctx: ActionContext, action: EngineAction): Promise<void> {
  if (action.type === 'start_run') {
    await report(ctx, { type: 'run_finished', runId: action.run.id, passed: false, failedChecks: ['merge-queue: the test run could not be started'] });
  } else if (action.type === 'merge') {
    await report(ctx, { type: 'merge_finished', runId: action.runId, ok: false, reason: 'merge_failed' });
  }
}

function report(ctx: ActionContext, event: EngineEvent): Promise<void> {
  return ctx.stores.engine.enqueue(ctx.queue.id, event, ctx.now());
}

function hostOf(ctx: ActionContext): GitHost | undefined {
  return ctx.hosts.forHost(ctx.queue.repo.host);
}

async function publishStatus(ctx: ActionContext, action: Extract<EngineAction, { type: 'publish_status' }>): Promise<void> {
  const entry = await ctx.stores.entries.findById(action.entryId);
  if (!entry || entry.state === action.state) return;
  const at = new Date(ctx.now());
  const event = { at, state: action.state, reason: action.reason, ...(action.detail ? { detail: action.detail } : {}) };
  entry.state = action.state;
  entry.stateChangedAt = at;
  entry.concludedAt = isTerminal(action.state) ? at : null;
  await ctx.stores.entries.save(entry, [event]);
  await showOnPullRequest(ctx, entry, action);
}

/** The host shows the new state on the PR itself (a check run, a comment on ejection). */
async function showOnPullRequest(ctx: ActionContext, entry: QueueEntryRecord, action: Extract<EngineAction, { type: 'publish_status' }>): Promise<void> {
  const host = hostOf(ctx);
  if (!host || !entry.facts) return;
  const { queue, stores } = ctx;
  let position: number | undefined;
  if (!isTerminal(action.state)) {
    const index = (await stores.entries.listEnqueued(queue.id)).findIndex((e) => e.id === entry.id);
    if (index >= 0) position = index + 1;
  }
  const run = await stores.testRuns.latestForPr(queue.id, entry.prNumber);
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

async function startRun(ctx: ActionContext, run: EngineRun): Promise<void> {
  const { stores, queue } = ctx;
  const tested = await describeHeads(ctx, run.unit);
  const dependent = await describeHeads(ctx, run.ahead);
  const record =
    (await stores.testRuns.findByEngineRunId(queue.id, run.id)) ??
    (await stores.testRuns.insert({
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
    }));
  if (record.status !== 'in_progress') return;
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
    await report(ctx, { type: 'run_finished', runId: run.id, passed: false, failedChecks: [started.message] });
    return;
  }
  const culprit = [...dependent, ...tested].find((pr) => pr.prNumber === started.prNumber);
  await stores.testRuns.update(record.id, { status: 'failed', finishedAt, failureStatuses: ['merge_conflict'] });
  await report(ctx, { type: 'run_finished', runId: run.id, passed: false, failedChecks: ['merge conflict'], ...(culprit ? { conflictEntryId: culprit.entryId } : {}) });
}

async function cancelRun(ctx: ActionContext, engineRunId: string): Promise<void> {
  const record = await ctx.stores.testRuns.findByEngineRunId(ctx.queue.id, engineRunId);
  if (!record || record.status !== 'in_progress') return;
  await hostOf(ctx)?.cancelTestRun(ctx.queue.repo, record.id);
  await ctx.stores.testRuns.update(record.id, { status: 'cancelled', finishedAt: new Date(ctx.now()) });
}

async function merge(ctx: ActionContext, action: Extract<EngineAction, { type: 'merge' }>): Promise<void> {
  const record = await ctx.stores.testRuns.findByEngineRunId(ctx.queue.id, action.runId);
  const host = hostOf(ctx);
  if (!record || !host) {
    await report(ctx, { type: 'merge_finished', runId: action.runId, ok: false, reason: 'merge_failed' });
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
  await report(ctx, outcome.ok ? { type: 'merge_finished', runId: action.runId, ok: true, newBaseSha: outcome.newBaseSha } : { type: 'merge_finished', runId: action.runId, ok: false, reason: outcome.reason });
}
