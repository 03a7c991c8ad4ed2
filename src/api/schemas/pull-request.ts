import { z } from 'zod';
import { PRIORITY_NAMES, MAX_PRIORITY_VALUE } from '../../domain/priority.js';
import { PULL_REQUEST_STATES, STATE_CHANGE_REASONS } from '../../domain/pull-request-state.js';
import { NOT_READY_REASONS } from '../../engine/admission.js';
import { HOST_MERGEABILITIES } from '../../domain/records.js';
import { integer, isoDateTime, lowerCaseEnum, prNumberSchema, queueIdentity, shaSchema, upperCaseEnum } from './common.js';

const priorityNames = Object.keys(PRIORITY_NAMES) as [keyof typeof PRIORITY_NAMES, ...(keyof typeof PRIORITY_NAMES)[]];

/** `urgent`, `high`, `medium`, `low`, or 0..255 (lower is more urgent). */
export const prioritySchema = z
  .union([lowerCaseEnum(priorityNames), integer(0, MAX_PRIORITY_VALUE)])
  .describe('A name (urgent=0, high=10, medium=100, low=200) or an integer 0..255; lower is more urgent.');

const prRef = z.object({ number: prNumberSchema });

export const pullRequestRequest = z.object({ ...queueIdentity, pr: prRef });

export const submitPullRequestRequest = z.object({
  ...queueIdentity,
  pr: prRef,
  priority: prioritySchema.optional(),
  noBatch: z.boolean().optional().describe('Test this PR alone, never in a batch.'),
  riskHint: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe(
      'Predicted probability (0 to 1) that this PR breaks the build, e.g. from its own CI before queueing, its size or its author\'s recent ejections. The queue tests a PR with a chance of breaking of 40 % or more alone and builds the runs behind it without it, batches safe PRs together, and lets safer PRs go up to an hour ahead of risky ones not yet tested. With adaptive tuning the queue moves it by half of what its author\'s and its size\'s recent outcomes in the queue say. Re-submitting updates it.',
    ),
});

export const getSubmittedPullRequestRequest = z.object({
  ...queueIdentity,
  pr: prRef,
  includeTimeline: z.boolean().optional(),
});

/** Upper bound per target: real build targets are paths or labels, never megabytes. */
const targetName = z.string().min(1).max(4096);

export const setImpactedTargetsRequest = z.object({
  ...queueIdentity,
  pr: z.object({ number: prNumberSchema, sha: shaSchema.describe('The PR head the targets were computed for.') }),
  impactedTargets: z
    .union([z.array(targetName), upperCaseEnum(['ALL'])])
    .describe('The targets this PR changes, or "ALL" when it may change every target.'),
});

export const setImpactedTargetsResponse = z.object({
  prNumber: z.number(),
  sha: z.string(),
  impactedTargets: z.union([z.literal('ALL'), z.object({ count: z.number() })]),
  isCurrentlySubmittedToQueue: z.boolean(),
});

export const listPullRequestsRequest = z.object({
  ...queueIdentity,
  // At most one of each state (a list of millions would block the event loop in validation and the query).
  state: z.union([upperCaseEnum(PULL_REQUEST_STATES), z.array(upperCaseEnum(PULL_REQUEST_STATES)).min(1).max(PULL_REQUEST_STATES.length)]).optional(),
  since: isoDateTime.optional(),
  until: isoDateTime.optional(),
  take: integer(1, 100).optional(),
  cursor: z.string().min(1).max(200).optional(),
});

const timelineEventView = z.object({
  timestamp: z.string(),
  state: z.enum(PULL_REQUEST_STATES),
  reason: z.enum(STATE_CHANGE_REASONS),
  detail: z.string().optional(),
});

/** A submitted pull request as every endpoint shows it. */
export const pullRequestView = z.object({
  id: z.string(),
  state: z.enum(PULL_REQUEST_STATES),
  readiness: z.object({
    hasImpactedTargets: z.boolean(),
    requiresImpactedTargets: z.boolean(),
    doesBaseBranchMatch: z.boolean(),
    gitHubMergeability: z.enum(HOST_MERGEABILITIES),
  }),
  notReadyReason: z.enum(NOT_READY_REASONS).optional().describe('Why a NOT_READY PR is not admitted yet.'),
  stateChangedAt: z.string(),
  submittedAt: z.string(),
  priorityValue: z.number(),
  priorityName: z.enum(priorityNames).optional(),
  skipTheLine: z.boolean(),
  isCurrentlySubmittedToQueue: z.boolean(),
  noBatch: z.boolean(),
  prNumber: z.number(),
  prTitle: z.string().optional(),
  prSha: z.string().optional(),
  prBaseBranch: z.string().optional(),
  prAuthor: z.string().optional(),
  impactedTargets: z.union([z.array(z.string()), z.literal('ALL')]).optional(),
  waitingReason: z
    .string()
    .optional()
    .describe('Why the PR waits without moving, when it is not its own doing (the repository host failing: it keeps its place).'),
  timeline: z.array(timelineEventView).optional(),
  estimatedMergeAt: z
    .string()
    .optional()
    .describe('When the PR is forecast to merge, from the queue ahead of it and its recent CI durations and failure rate (absent when not forecast: not ready, ended, or the queue paused).'),
});
export type PullRequestView = z.infer<typeof pullRequestView>;

export const listPullRequestsResponse = z.object({
  pullRequests: z.array(pullRequestView),
  nextCursor: z.string().optional(),
});
