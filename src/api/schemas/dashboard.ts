import { z } from 'zod';
import { QUEUE_STATES } from '../../domain/queue-state.js';
import { TEST_RUN_STATUSES } from '../../domain/records.js';
import { integer, queueIdentity, repoSchema } from './common.js';
import { pullRequestView, type PullRequestView } from './pull-request.js';
import { queueView } from './queue.js';

/** What the dashboard reads: the same auth and organization rules as every v1 endpoint. */

export const listQueuesRequest = z.object({});

const problem = queueView.shape.problems.element;

export const queueSummary = z.object({
  id: z.string(),
  repo: repoSchema,
  targetBranch: z.string(),
  state: z.enum(QUEUE_STATES),
  mode: queueView.shape.mode,
  depth: z.number().describe('PRs enqueued (not merged, failed or cancelled).'),
  testing: z.number().describe('PRs in a test run now.'),
  notReady: z.number(),
  merged24h: z.number().describe('PRs merged in the last 24 hours.'),
  timeInQueueP95Minutes: z.number().nullable().describe('95th percentile of submission-to-merge over the last 24 hours (null: nothing merged).'),
  problems: z.array(problem),
});
export const listQueuesResponse = z.object({ queues: z.array(queueSummary) });
export type QueueSummary = z.infer<typeof queueSummary>;

const check = z.object({ name: z.string(), status: z.string(), conclusion: z.string().optional(), url: z.string().optional() });

/** A run in flight as the engine holds it, with what the host reported for it. */
export const boardRun = z.object({
  engineRunId: z.string(),
  testRunId: z.string().optional(),
  seq: z.number().describe('Start order: a speculative chain is ordered by it.'),
  status: z.enum(['running', 'passed', 'failed']),
  recordStatus: z.enum(TEST_RUN_STATUSES).optional(),
  isBisection: z.boolean(),
  baseSha: z.string(),
  testBranch: z.string().optional(),
  testBranchSha: z.string().optional(),
  startedAt: z.string(),
  pullRequests: z.array(z.number()).describe('The PRs the run decides (several: a batch or a bisection half).'),
  ahead: z.array(z.number()).describe('PRs ahead whose changes the run includes (its place in a chain).'),
  checks: z.array(check),
  failedChecks: z.array(z.string()),
  probeOf: z
    .string()
    .optional()
    .describe('A probe: the engine run id of the batch in flight whose first part it tests in an idle CI slot; it decides nothing unless that batch fails.'),
});
export type BoardRun = z.infer<typeof boardRun>;

export const queueBoard = z.object({
  queue: queueView,
  runs: z.array(boardRun),
  recentlyEnded: z
    .array(z.object({ pullRequest: pullRequestView, reason: z.string(), detail: z.string().optional() }))
    .describe('PRs merged, failed or cancelled in the last 24 hours, newest first (at most 50), with the reason they ended.'),
  forecast: z.object({
    ciDurationMinutes: z.number().describe('Median duration of the test runs that finished in the last 24 hours (or the default).'),
    failureRate: z.number(),
    basedOnRuns: z.number(),
  }),
});
export type QueueBoard = z.infer<typeof queueBoard>;
export type { PullRequestView };

export const queueHealthRequest = z.object({
  ...queueIdentity,
  hours: integer(1, 24 * 30).default(24).describe('The window: this many hours back from now.'),
  bucketMinutes: integer(5, 24 * 60).default(60).describe('The width of each point of the series.'),
});

const bucket = z.object({
  start: z.string(),
  merged: z.number(),
  ejected: z.record(z.string(), z.number()),
  cancelled: z.number(),
  restarts: z.number(),
  retries: z.number(),
  ciRuns: z.number(),
  timeInQueueP50: z.number().nullable(),
  timeInQueueP95: z.number().nullable(),
});

export const queueHealthView = z.object({
  from: z.string(),
  to: z.string(),
  bucketMinutes: z.number(),
  buckets: z.array(bucket),
  totals: z.object({
    merged: z.number(),
    ejected: z.record(z.string(), z.number()),
    restarts: z.number(),
    retries: z.number(),
    ciRuns: z.number(),
    ciRunsPerMerged: z.number().nullable(),
    timeInQueueP50: z.number().nullable(),
    timeInQueueP95: z.number().nullable(),
  }),
});
export type QueueHealthView = z.infer<typeof queueHealthView>;
