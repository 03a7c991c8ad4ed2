import { isTerminal } from '../domain/pull-request-state.js';
import type { TestedPullRequest, TestRunRecord } from '../domain/records.js';
import type { RepoRef } from '../domain/repo.js';
import type { Stores } from '../ports/stores.js';
import type { TestingDetailsView } from '../api/schemas/testing-details.js';
import { findQueue } from './queue-service.js';
import { notFound, succeed, type Outcome } from './outcome.js';

const prView = (pr: TestedPullRequest) => ({
  prNumber: pr.prNumber,
  ...(pr.url ? { prUrl: pr.url } : {}),
  ...(pr.title ? { title: pr.title } : {}),
});

/** What a test run tested, what it waits on, and which checks failed. */
export async function getTestingDetails(
  stores: Stores,
  query: { repo: RepoRef; targetBranch: string; testRunId?: string; prNumber?: number },
): Promise<Outcome<TestingDetailsView>> {
  const queue = await findQueue(stores, query.repo, query.targetBranch);
  if (!queue.ok) return queue;
  const queueId = queue.value.id;

  let run: TestRunRecord | null;
  if (query.testRunId !== undefined) {
    run = await stores.testRuns.findById(queueId, query.testRunId);
    if (!run) return notFound(`Test run ${query.testRunId} does not exist in the queue for ${query.targetBranch}.`);
    // Both named: the run must be one of the PR's (found by review: the PR was ignored, and the answer could describe
    // a run that never held it).
    const prNumber = query.prNumber;
    if (prNumber !== undefined && ![...run.testedPullRequests, ...run.dependentPullRequests].some((pr) => pr.prNumber === prNumber)) {
      return notFound(`Test run ${query.testRunId} did not test pull request #${prNumber} (neither as its own nor as one it built on).`);
    }
  } else {
    const prNumber = query.prNumber as number;
    const entry = await stores.entries.find(queueId, prNumber);
    if (!entry) return notFound(`Pull request #${prNumber} was never submitted to the queue for ${query.targetBranch}.`);
    run = await stores.testRuns.latestForPr(queueId, prNumber);
    if (!run) return notFound(`Pull request #${prNumber} has not been tested yet (it is ${entry.state}).`);
  }

  // A passed run merges only once every PR it builds on has merged. Only those PRs are read (a read each, as many as
  // the run builds on), not the whole queue: the cost of this answer does not grow with the queue (found by review).
  let waitingOn: TestedPullRequest[] = [];
  if (run.status === 'succeeded' && run.dependentPullRequests.length > 0) {
    const entries = await Promise.all(run.dependentPullRequests.map((pr) => stores.entries.find(queueId, pr.prNumber)));
    waitingOn = run.dependentPullRequests.filter((_pr, i) => {
      const entry = entries[i];
      return entry !== null && entry !== undefined && !isTerminal(entry.state);
    });
  }

  return succeed({
    testRunId: run.id,
    status: run.status,
    testBranch: run.testBranch,
    ...(run.testBranchSha ? { testBranchSha: run.testBranchSha } : {}),
    baseSha: run.baseSha,
    createdAt: run.createdAt.toISOString(),
    ...(run.finishedAt ? { finishedAt: run.finishedAt.toISOString() } : {}),
    isBisection: run.isBisection,
    requiredStatuses: run.requiredStatuses,
    requiredStatusesSource: run.requiredStatusesSource,
    checkSuites: run.checkRuns.length > 0 ? [{ checkRuns: run.checkRuns }] : [],
    statusChecks: run.statusChecks,
    testedPullRequests: run.testedPullRequests.map(prView),
    ...(run.impactedTargets ? { impactedTargets: run.impactedTargets } : {}),
    dependentPrs: run.dependentPullRequests.map(prView),
    waitingOn: waitingOn.map(prView),
    failureStatuses: run.failureStatuses,
    ...(run.landedWithoutCi ? { landedWithoutCi: run.landedWithoutCi } : {}),
  });
}
