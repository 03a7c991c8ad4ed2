import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { z } from 'zod';
import type { PullRequestView, setImpactedTargetsResponse } from '../api/schemas/pull-request.js';
import { FULL_SHA } from '../domain/commit-sha.js';
import { PRIORITY_NAMES, MAX_PRIORITY_VALUE } from '../domain/priority.js';
import { usageError } from './cli-error.js';
import { resolveConnection, type ConnectionOptions } from './connection.js';
import { clock, formatFields, formatTable, relative, when, words } from './format-table.js';
import { postApi } from './http-client.js';
import type { CliContext } from './io.js';
import { parsePrNumber, queueLabel, resolveQueue, withConnectionOptions, withQueueOptions, type QueueOptions, type QueueRef } from './options.js';
import { priorityOf, showQueue } from './queue-commands.js';

type Options = ConnectionOptions & QueueOptions;
type TargetsAnswer = z.infer<typeof setImpactedTargetsResponse>;

/** `mq status <pr>`: state, why, forecast, and the timeline oldest first. */
async function showPullRequest(ctx: CliContext, opts: Options, prNumber: number): Promise<void> {
  const queue = resolveQueue(opts, ctx.env);
  const answer = await postApi<PullRequestView>(await resolveConnection(opts, ctx.env), 'getSubmittedPullRequest', { ...queue, pr: { number: prNumber }, includeTimeline: true });
  if (opts.json) return ctx.io.stdout(answer.text);
  const pr = answer.body;
  const timeline = [...(pr.timeline ?? [])].reverse();
  const last = timeline.at(-1);
  const reason = pr.notReadyReason ? `not ready: ${words(pr.notReadyReason)}` : last ? `${words(last.reason)}${last.detail ? `: ${last.detail}` : ''}` : undefined;
  const targets = pr.impactedTargets === undefined ? undefined : pr.impactedTargets === 'ALL' ? 'ALL' : `${pr.impactedTargets.length} target${pr.impactedTargets.length === 1 ? '' : 's'}`;
  const lines = [
    `#${pr.prNumber}${pr.prTitle ? ` ${pr.prTitle}` : ''}`,
    ...formatFields([
      ['Queue', queueLabel(queue)],
      ['State', `${pr.state} since ${clock(pr.stateChangedAt)} (${relative(pr.stateChangedAt)})`],
      ['Reason', reason],
      ['Merges', pr.estimatedMergeAt ? `forecast ${when(pr.estimatedMergeAt)}` : pr.isCurrentlySubmittedToQueue ? 'no forecast' : undefined],
      ['Waiting', pr.waitingReason],
      ['Priority', priorityOf(pr)],
      ['Head', pr.prSha ? `${pr.prSha.slice(0, 12)}${pr.prBaseBranch ? ` onto ${pr.prBaseBranch}` : ''}${pr.prAuthor ? ` by ${pr.prAuthor}` : ''}` : undefined],
      ['Targets', targets],
      ['Submitted', `${clock(pr.submittedAt)} (${relative(pr.submittedAt)})`],
    ]),
  ];
  if (timeline.length > 0) {
    lines.push('', ...formatTable(['TIME', 'STATE', 'REASON', 'DETAIL'], timeline.map((e) => [clock(e.timestamp, { seconds: true }), e.state, words(e.reason), e.detail ?? ''])));
  }
  for (const line of lines) ctx.io.stdout(line);
}

/** `urgent|high|medium|low` or 0..255, as the API takes it. */
function parsePriority(raw: string): string | number {
  const value = raw.trim().toLowerCase();
  if (/^\d{1,3}$/.test(value) && Number(value) <= MAX_PRIORITY_VALUE) return Number(value);
  if (Object.hasOwn(PRIORITY_NAMES, value)) return value;
  throw usageError(`--priority ${raw} must be ${Object.keys(PRIORITY_NAMES).join(', ')} or a number 0..${MAX_PRIORITY_VALUE} (lower is more urgent)`);
}

/** One line about a PR after a change: "#12 in acme/widgets main: TESTING (priority high)." */
function summary(queue: QueueRef, pr: PullRequestView): string {
  const why = pr.notReadyReason ? `, not ready: ${words(pr.notReadyReason)}` : '';
  return `#${pr.prNumber} in ${queueLabel(queue)}: ${pr.state} (priority ${priorityOf(pr)}${why}).`;
}

/** A mutation of one PR: the API's answer as JSON, or a line for people. */
async function changePullRequest(ctx: CliContext, opts: Options, endpoint: string, prNumber: number, extra: object, verb: string): Promise<void> {
  const queue = resolveQueue(opts, ctx.env);
  const answer = await postApi<PullRequestView>(await resolveConnection(opts, ctx.env), endpoint, { ...queue, pr: { number: prNumber }, ...extra });
  ctx.io.stdout(opts.json ? answer.text : `${verb} ${summary(queue, answer.body)}`);
}

/** Target names from a file (or stdin for "-"): a JSON array of strings, or one name per line. */
async function readTargets(file: string): Promise<string[]> {
  let text: string;
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
    throw usageError(`cannot read --file ${file}: ${why}`);
  }
  if (text.trimStart().startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw usageError(`--file ${file} starts like a JSON array but does not parse`);
    }
    if (!Array.isArray(parsed) || !parsed.every((t) => typeof t === 'string')) throw usageError(`--file ${file} must be a JSON array of strings`);
    return parsed as string[];
  }
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function setTargets(ctx: CliContext, prRaw: string, opts: Options & { sha?: string; file?: string; all?: boolean }): Promise<void> {
  const prNumber = parsePrNumber(prRaw);
  if (!FULL_SHA.test(opts.sha ?? '')) throw usageError(`--sha ${opts.sha ?? ''} must be the PR head's full commit sha (40 hexadecimal characters; git rev-parse HEAD)`);
  if (Boolean(opts.file) === Boolean(opts.all)) throw usageError('pass either --file F (target names, one per line or a JSON array) or --all');
  const queue = resolveQueue(opts, ctx.env);
  const impactedTargets = opts.all ? 'ALL' : await readTargets(opts.file as string);
  const answer = await postApi<TargetsAnswer>(await resolveConnection(opts, ctx.env), 'setImpactedTargets', { ...queue, pr: { number: prNumber, sha: opts.sha }, impactedTargets });
  if (opts.json) return ctx.io.stdout(answer.text);
  const { impactedTargets: set, isCurrentlySubmittedToQueue } = answer.body;
  const what = set === 'ALL' ? 'ALL targets' : `${set.count} impacted target${set.count === 1 ? '' : 's'}`;
  ctx.io.stdout(`Set ${what} for #${prNumber} at ${answer.body.sha.slice(0, 12)} in ${queueLabel(queue)}${isCurrentlySubmittedToQueue ? '' : ' (not in the queue now)'}.`);
}

export function registerPullRequestCommands(program: Command, ctx: CliContext): void {
  const command = (name: string, description: string) => withQueueOptions(withConnectionOptions(program.command(name).description(description)));

  command('status', 'Without a PR: the queue (state, problems, PRs in line with position and forecast). With one: its state, reason, forecast and timeline')
    .argument('[pr]', 'a pull request number')
    .action((pr: string | undefined, opts: Options) => (pr === undefined ? showQueue(ctx, opts) : showPullRequest(ctx, opts, parsePrNumber(pr))));

  command('submit', 'Submit a pull request (again: updates its priority and batching; after a failure: a new attempt)')
    .argument('<pr>', 'a pull request number')
    .option('--priority <priority>', `urgent, high, medium (default), low, or 0..${MAX_PRIORITY_VALUE}; lower is more urgent`)
    .option('--batch', 'allow batching again (re-submitting a --no-batch PR)')
    .option('--no-batch', 'test it alone, never in a batch')
    .action((pr: string, opts: Options & { priority?: string; batch?: boolean }) => {
      const prNumber = parsePrNumber(pr);
      const extra = { ...(opts.priority !== undefined ? { priority: parsePriority(opts.priority) } : {}), ...(opts.batch !== undefined ? { noBatch: !opts.batch } : {}) };
      return changePullRequest(ctx, opts, 'submitPullRequest', prNumber, extra, 'Submitted');
    });

  command('cancel', 'Take a pull request out of the queue')
    .argument('<pr>', 'a pull request number')
    .action((pr: string, opts: Options) => changePullRequest(ctx, opts, 'cancelPullRequest', parsePrNumber(pr), {}, 'Cancelled'));

  command('restart', 'Re-run the tests of a pull request that is TESTING or PENDING_FAILURE')
    .argument('<pr>', 'a pull request number')
    .action((pr: string, opts: Options) => changePullRequest(ctx, opts, 'restartTestsOnPullRequest', parsePrNumber(pr), {}, 'Restarted the tests of'));

  command('targets', 'Set the impacted targets of a PR head (parallel queues); the PR need not be submitted yet')
    .argument('<pr>', 'a pull request number')
    .requiredOption('--sha <sha>', 'the PR head the targets were computed for')
    .option('--file <file>', 'target names, one per line or a JSON array ("-" reads stdin)')
    .option('--all', 'the PR may impact every target')
    .action((pr: string, opts: Options & { sha?: string; file?: string; all?: boolean }) => setTargets(ctx, pr, opts));
}
