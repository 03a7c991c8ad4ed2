import { z } from 'zod';
import { branchSchema, integer, lowerCaseEnum, prNumberSchema, repoSchema } from './common.js';

/** Changes to a simulated PR in a sandbox repository (`repo.host: "sandbox"`). */
export const updateSandboxPullRequestRequest = z.object({
  repo: repoSchema,
  pr: z.object({ number: prNumberSchema }),
  title: z.string().min(1).max(256).optional(),
  body: z.string().max(65536).optional().describe('May hold a merge-commit-title: line.'),
  author: z.string().min(1).max(100).optional(),
  changedFiles: integer(0, 1_000_000).optional().describe('How many files the PR changes: with adaptive tuning the queue learns how often PRs of each size break.'),
  baseBranch: branchSchema.optional(),
  open: z.boolean().optional(),
  draft: z.boolean().optional(),
  outcome: lowerCaseEnum(['pass', 'fail', 'flaky'] as const).optional().describe('How CI treats runs that contain this PR.'),
  flakyRate: z.number().min(0).max(1).optional(),
  ciSeconds: integer(1, 86400).optional(),
  conflictsWith: z.array(prNumberSchema).max(100).optional(),
  push: z.literal(true).optional().describe('Push a new commit: the PR gets a new head sha.'),
  upToDate: z
    .literal(true)
    .optional()
    .describe("The PR was just brought up to date with its base branch (and its own CI ran there): with directMergeMode always, a PR that passes, up to date, with nothing ahead, lands without a test run."),
});

export const pushSandboxBranchRequest = z.object({ repo: repoSchema, branch: branchSchema });
export const sandboxRepositoryRequest = z.object({ repo: repoSchema });
