import type { Command } from 'commander';
import type { QueueBoard, QueueSummary } from '../api/schemas/dashboard.js';
import type { QueueView } from '../api/schemas/queue.js';
import { resolveConnection, type ConnectionOptions } from './connection.js';
import { formatTable, truncate, when, words } from './format-table.js';
import { postApi } from './http-client.js';
import type { CliContext } from './io.js';
import { queueLabel, repoLabel, resolveQueue, withConnectionOptions, withQueueOptions, type QueueOptions } from './options.js';

type Options = ConnectionOptions & QueueOptions;

/** `mq queues`: the token's organization's queues at a glance. */
async function listQueues(ctx: CliContext, opts: ConnectionOptions): Promise<void> {
  const answer = await postApi<{ queues: QueueSummary[] }>(await resolveConnection(opts, ctx.env), 'listQueues', {});
  if (opts.json) return ctx.io.stdout(answer.text);
  const queues = answer.body.queues;
  if (queues.length === 0) return ctx.io.stdout("No queues for this token's organization yet.");
  const rows = queues.map((q) => [
    repoLabel(q.repo),
    q.targetBranch,
    q.state,
    q.mode,
    String(q.depth),
    String(q.testing),
    String(q.notReady),
    String(q.merged24h),
    q.timeInQueueP95Minutes === null ? '-' : `${q.timeInQueueP95Minutes} min`,
    q.problems.map((p) => p.kind).join(', ') || '-',
  ]);
  const right = ['left', 'left', 'left', 'left', 'right', 'right', 'right', 'right', 'right', 'left'] as const;
  for (const line of formatTable(['REPO', 'BRANCH', 'STATE', 'MODE', 'DEPTH', 'TESTING', 'NOT READY', 'MERGED 24H', 'P95 IN QUEUE', 'PROBLEMS'], rows, [...right])) ctx.io.stdout(line);
}

/** `mq status` without a PR: the queue's state and problems, then its PRs in line with position and forecast. */
export async function showQueue(ctx: CliContext, opts: Options): Promise<void> {
  const queue = resolveQueue(opts, ctx.env);
  const answer = await postApi<QueueBoard>(await resolveConnection(opts, ctx.env), 'getQueueBoard', queue);
  if (opts.json) return ctx.io.stdout(answer.text);
  const { queue: q, runs, forecast } = answer.body;
  const { io } = ctx;
  const batching = q.tuning === 'adaptive' ? ', adaptive batches' : q.batch ? `, batches of ${q.batchingMinSize}+` : '';
  io.stdout(`${queueLabel(q)}: ${q.state} (${q.mode}, concurrency ${q.concurrency}${batching}, ${runs.length} run${runs.length === 1 ? '' : 's'} in flight; CI ~${forecast.ciDurationMinutes} min, ${Math.round(forecast.failureRate * 100)}% failing)`);
  for (const p of q.problems) io.stdout(`Problem: ${words(p.kind)} since ${when(p.since)}: ${p.message}`);
  // In line as the queue works through it: PRs in runs by start order (a chain's order), then the rest as listed.
  const runSeq = new Map(runs.flatMap((run) => run.pullRequests.map((n) => [n, run.seq] as const)));
  const rank = (n: number) => runSeq.get(n) ?? Number.MAX_SAFE_INTEGER;
  const waiting = q.enqueuedPullRequests.filter((pr) => pr.state !== 'NOT_READY').sort((a, b) => rank(a.prNumber) - rank(b.prNumber));
  const notReady = q.enqueuedPullRequests.filter((pr) => pr.state === 'NOT_READY');
  if (waiting.length + notReady.length === 0) return io.stdout('No pull requests in the queue.');
  const rows = [
    ...waiting.map((pr, i) => [String(i + 1), `#${pr.prNumber}`, pr.state, priorityOf(pr), pr.estimatedMergeAt ? when(pr.estimatedMergeAt) : 'no forecast', truncate(pr.prTitle ?? '', 60)]),
    ...notReady.map((pr) => ['-', `#${pr.prNumber}`, pr.state, priorityOf(pr), `not ready: ${words(pr.notReadyReason ?? 'waiting')}`, truncate(pr.prTitle ?? '', 60)]),
  ];
  for (const line of formatTable(['POS', 'PR', 'STATE', 'PRIORITY', 'MERGES (FORECAST)', 'TITLE'], rows, ['right', 'right'])) io.stdout(line);
  const waitingReason = q.enqueuedPullRequests.find((pr) => pr.waitingReason)?.waitingReason;
  if (waitingReason && q.problems.length === 0) io.stdout(`Waiting: ${waitingReason}`);
}

export function priorityOf(pr: { priorityName?: string; priorityValue: number; noBatch?: boolean }): string {
  return `${pr.priorityName ?? String(pr.priorityValue)}${pr.noBatch ? ', no batch' : ''}`;
}

const STATE_CHANGES = {
  pause: { state: 'PAUSED', says: 'Pause the queue: it starts and merges nothing until resumed' },
  drain: { state: 'DRAINING', says: 'Drain the queue: runs in flight merge, nothing new starts' },
  resume: { state: 'RUNNING', says: 'Resume the queue (after pause or drain; also retries a blocked landing)' },
} as const;

async function setState(ctx: CliContext, opts: Options, state: 'RUNNING' | 'PAUSED' | 'DRAINING'): Promise<void> {
  const queue = resolveQueue(opts, ctx.env);
  const answer = await postApi<QueueView>(await resolveConnection(opts, ctx.env), 'updateQueue', { ...queue, state });
  if (opts.json) return ctx.io.stdout(answer.text);
  const q = answer.body;
  const enqueued = q.enqueuedPullRequests.length;
  ctx.io.stdout(`${queueLabel(q)}: ${q.state} (${enqueued} PR${enqueued === 1 ? '' : 's'} enqueued).`);
}

export function registerQueueCommands(program: Command, ctx: CliContext): void {
  withConnectionOptions(program.command('queues').description("List the token's organization's queues: state, depth, testing, merged in 24 h, problems")).action(
    (opts: ConnectionOptions) => listQueues(ctx, opts),
  );
  for (const [name, { state, says }] of Object.entries(STATE_CHANGES)) {
    withQueueOptions(withConnectionOptions(program.command(name).description(says))).action((opts: Options) => setState(ctx, opts, state));
  }
}
