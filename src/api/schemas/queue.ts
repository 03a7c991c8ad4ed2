import { z } from 'zod';
import { DIRECT_MERGE_MODES, MERGE_METHODS, QUEUE_MODES, TUNED_SETTINGS, TUNINGS } from '../../domain/queue-config.js';
import { QUEUE_STATES, REQUESTED_QUEUE_STATES } from '../../domain/queue-state.js';
import { integer, lowerCaseEnum, queueIdentity, repoSchema, uint32, upperCaseEnum } from './common.js';
import { pullRequestView } from './pull-request.js';

export const queueRequest = z.object(queueIdentity);

export const createQueueRequest = z.object({
  ...queueIdentity,
  mode: lowerCaseEnum(QUEUE_MODES).optional(),
  concurrency: uint32(1).optional(),
});

const statusName = z.string().min(1).max(255);

export const updateQueueFields = z.object({
  ...queueIdentity,
  state: upperCaseEnum(REQUESTED_QUEUE_STATES).optional(),
  mode: lowerCaseEnum(QUEUE_MODES).optional(),
  concurrency: uint32(1).optional(),
  batch: z.boolean().optional(),
  batchingMinSize: uint32(1).optional(),
  batchingMaxWaitTimeMinutes: uint32(0).optional(),
  bisectionConcurrency: uint32(1).optional(),
  pendingFailureDepth: uint32(0).optional(),
  canOptimisticallyMerge: z.boolean().optional(),
  testingTimeoutMinutes: uint32(1).optional(),
  mergeMethod: lowerCaseEnum(MERGE_METHODS).optional(),
  requiredStatuses: z.array(statusName).max(100).optional(),
  deleteRequiredStatuses: z.literal(true).optional(),
  commentsEnabled: z.boolean().optional(),
  commandsEnabled: z.boolean().optional(),
  statusCheckEnabled: z.boolean().optional(),
  enqueueingLabel: z.string().min(1).max(50).optional(),
  createPrsForTestingBranches: z.boolean().optional(),
  directMergeMode: lowerCaseEnum(DIRECT_MERGE_MODES).optional(),
  tuning: lowerCaseEnum(TUNINGS)
    .optional()
    .describe(
      '`adaptive` (new queues): the queue chooses batch size, batch waits, bisection and failure handling from its observed break rate and the PRs\' risk hints, within `concurrency`. `fixed`: batch, batchingMinSize, batchingMaxWaitTimeMinutes, bisectionConcurrency, pendingFailureDepth and canOptimisticallyMerge are used as given; setting any of them without `tuning` fixes the tuning.',
    ),
  stallAlertMinutes: integer(0, 7 * 24 * 60)
    .optional()
    .describe('Minutes without progress (a run started or finished, a PR merged or ejected) while PRs wait before the queue reports itself stalled; 0 turns the alert off. Default 90.'),
  labelingBots: z
    .array(z.string().regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\[bot\]$/, 'must be a bot account: its login ends in [bot], e.g. dependabot[bot]'))
    .max(20)
    .optional()
    .describe('Bot accounts whose label changes count as a writer\'s (GitHub cannot say a bot has write access): e.g. `["dependabot[bot]", "renovate[bot]"]`. Default none.'),
  retryFailedTests: integer(0, 5)
    .optional()
    .describe('Flake tolerance: a PR whose own test run failed is tested again this many times before it is ejected (each retry is on its timeline, reason `retried`). Default 0.'),
});

/**
 * A request that both asks the queue to choose its batching and failure settings (`tuning: adaptive`) and gives one
 * of them: the value would be stored and never used (found by review), so it is a 400 naming the setting.
 */
export function noTunedSettingWithAdaptive(settings: Partial<Record<(typeof TUNED_SETTINGS)[number] | 'tuning', unknown>>, ctx: z.RefinementCtx): void {
  if (settings.tuning !== 'adaptive') return;
  for (const key of TUNED_SETTINGS) {
    if (settings[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `is chosen by the queue with tuning "adaptive": leave it out, or set tuning "fixed" to give it` });
  }
}

export const updateQueueRequest = updateQueueFields.superRefine(noTunedSettingWithAdaptive);
export type UpdateQueueRequest = z.infer<typeof updateQueueRequest>;

export const queueView = z.object({
  id: z.string(),
  repo: repoSchema,
  targetBranch: z.string(),
  branch: z.string(),
  state: z.enum(QUEUE_STATES),
  mode: z.enum(QUEUE_MODES),
  concurrency: z.number(),
  batch: z.boolean(),
  batchingMinSize: z.number(),
  batchingMaxWaitTimeMinutes: z.number(),
  bisectionConcurrency: z.number(),
  pendingFailureDepth: z.number(),
  canOptimisticallyMerge: z.boolean(),
  testingTimeoutMinutes: z.number(),
  mergeMethod: z.enum(MERGE_METHODS),
  requiredStatuses: z.array(z.string()).optional().describe('Absent: the branch protection decides.'),
  commentsEnabled: z.boolean(),
  commandsEnabled: z.boolean(),
  statusCheckEnabled: z.boolean(),
  enqueueingLabel: z.string(),
  createPrsForTestingBranches: z.boolean(),
  directMergeMode: z.enum(DIRECT_MERGE_MODES),
  tuning: z.enum(TUNINGS).describe('`adaptive`: the batching and failure settings above are chosen by the queue and not used; `fixed`: they are used as given.'),
  stallAlertMinutes: z.number(),
  retryFailedTests: z.number(),
  labelingBots: z.array(z.string()),
  configuredBy: z
    .union([z.literal('api'), z.object({ file: z.string(), commitSha: z.string(), appliedAt: z.string() })])
    .describe(
      'Where the settings come from: `api` (updateQueue), or the repository\'s queue file and the commit it was applied from. The file wins: while it names this queue, updateQueue may change only `state`.',
    ),
  createdAt: z.string(),
  updatedAt: z.string(),
  problems: z
    .array(
      z.object({
        kind: z.enum(['host_unavailable', 'landing_blocked', 'checks_never_reported', 'queue_stalled']),
        since: z.string(),
        message: z.string(),
        nextTryAt: z.string().optional().describe("`landing_blocked`: when the queue tries again by itself (absent while it is trying)."),
      }),
    )
    .describe(
      'What keeps the queue from moving that is not a PR\'s fault (empty when nothing): `host_unavailable`, the repository host failing (its actions retried with back-off); `landing_blocked`, the host refusing to land passed runs, or to build runs, for a reason no PR caused (the message says the fix; the queue tries again by itself at `nextTryAt`, and any updateQueue tries at once); `checks_never_reported`, the last test run got no result from its required checks in time (usually CI not running on `mq/**`); `queue_stalled`, nothing started, finished or merged for `stallAlertMinutes` while PRs wait.',
    ),
  enqueuedPullRequests: z.array(pullRequestView),
});
export type QueueView = z.infer<typeof queueView>;

export const deleteQueueResponse = z.object({ deleted: z.literal(true), id: z.string() });
