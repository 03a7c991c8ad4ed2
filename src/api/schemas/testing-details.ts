import { z } from 'zod';
import { TEST_RUN_STATUSES } from '../../domain/records.js';
import { prNumberSchema, queueIdentity } from './common.js';

/** Identify a run by its id, or by a PR (its current or last run). */
export const testingDetailsRequest = z
  .object({
    ...queueIdentity,
    testRunId: z.string().min(1).max(64).optional(),
    pr: z.object({ number: prNumberSchema }).optional(),
  })
  .refine((body) => body.testRunId !== undefined || body.pr !== undefined, {
    message: 'must name the test run with testRunId or pr.number',
  });

const testedPr = z.object({ prNumber: z.number(), prUrl: z.string().optional(), title: z.string().optional() });

export const testingDetailsView = z.object({
  testRunId: z.string(),
  status: z.enum(TEST_RUN_STATUSES),
  testBranch: z.string(),
  testBranchSha: z.string().optional(),
  baseSha: z.string(),
  createdAt: z.string(),
  finishedAt: z.string().optional(),
  isBisection: z.boolean(),
  requiredStatuses: z.array(z.string()),
  requiredStatusesSource: z.enum(['queue', 'branch_protection', 'ruleset', 'none']),
  landedWithoutCi: z
    .string()
    .optional()
    .describe("Direct merge (directMergeMode: always): the run spent no CI because the PR was up to date with the branch and its own required checks had passed on that content; the sentence says so."),
  checkSuites: z.array(
    z.object({
      checkRuns: z.array(
        z.object({ name: z.string(), url: z.string().optional(), status: z.string(), conclusion: z.string().optional() }),
      ),
    }),
  ),
  statusChecks: z.array(z.object({ context: z.string(), url: z.string().optional(), state: z.string() })),
  testedPullRequests: z.array(testedPr),
  impactedTargets: z.union([z.array(z.string()), z.literal('ALL')]).optional(),
  dependentPrs: z.array(testedPr),
  waitingOn: z.array(testedPr),
  failureStatuses: z.array(z.string()),
});
export type TestingDetailsView = z.infer<typeof testingDetailsView>;
