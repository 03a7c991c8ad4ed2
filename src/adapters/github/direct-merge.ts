import type { RequiredCheckApp } from '../../domain/records.js';
import type { RepoRef } from '../../domain/repo.js';
import type { CheckResult, MergeOutcome, MergeRequest, TestedHead } from '../../ports/git-host.js';
import { decideChecks } from './check-outcome.js';
import { readCommitChecks } from './commit-checks.js';
import { getData, repoParams, type GitHubClient, type GitHubLog } from './github-client.js';
import { landTestedCommit } from './land-tested-commit.js';

/**
 * Whether a PR may land without a queue run (directMergeMode: always): its head
 * already contains the branch head the run is built on (nothing on the branch it
 * has not seen) and its own required checks passed on that head. Its CI then
 * tested exactly the content that lands, so a second run would only repeat it.
 * Null when either does not hold: the PR is tested like any other.
 */
export async function directMergeVerdict(
  client: GitHubClient,
  repo: RepoRef,
  target: { branch: string; baseSha: string },
  head: TestedHead,
  required: string[],
  apps: RequiredCheckApp[] = [],
): Promise<{ reason: string; checkRuns: CheckResult[] } | null> {
  // `behind_by` counts the branch's commits the head lacks; per_page 1 keeps the answer small.
  const compared = await getData<{ behind_by: number }>(client, 'GET /repos/{owner}/{repo}/compare/{basehead}', { ...repoParams(repo), basehead: `${target.baseSha}...${head.headSha}`, per_page: 1 });
  if (compared.behind_by !== 0) return null;
  const { checkRuns, statuses } = await readCommitChecks(client, repo, head.headSha, required, apps);
  const verdict = decideChecks(required, checkRuns, statuses);
  if (verdict.verdict !== 'passed') return null;
  return {
    reason: `#${head.prNumber} was up to date with ${target.branch} (${target.baseSha.slice(0, 7)}) and its own required checks (${required.join(', ')}) had passed on ${head.headSha.slice(0, 7)}: they tested the content that lands, so no second CI run was spent.`,
    checkRuns: verdict.checkRuns,
  };
}

/**
 * Lands a direct merge by fast-forwarding the branch to the PR's head itself:
 * the very commit whose checks gave the verdict (so protection's required
 * checks are met on it), atomically against a push meanwhile (no fast-forward,
 * nothing lands, the queue rebuilds and the PR, behind now, gets a real run).
 * GitHub marks the PR merged. The PR's own commits land as they are, whatever
 * the queue's merge method: a squash or merge commit would be a new commit its
 * CI never saw, which protection refuses and the runs behind it were not built on.
 */
export function landDirectly(client: GitHubClient, request: MergeRequest, log: GitHubLog): Promise<MergeOutcome> {
  const head = request.heads[0];
  if (!head || request.heads.length !== 1) return Promise.resolve({ ok: false, reason: 'blocked', message: `a direct merge lands one pull request, run ${request.runId} has ${request.heads.length}` });
  return landTestedCommit(client, request, head.headSha, log, { landsPullRequestHead: true });
}
