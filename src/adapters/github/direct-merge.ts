import type { RepoRef } from '../../domain/repo.js';
import type { CheckResult, MergeOutcome, MergeRequest, TestedHead } from '../../ports/git-host.js';
import { decideChecks } from './check-outcome.js';
import { readCommitChecks } from './commit-checks.js';
import { failedWith, getData, messageOf, repoParams, type GitHubClient, type GitHubLog } from './github-client.js';
import type { PullRequestData } from './github-types.js';
import { landingMessage, readBranch } from './test-branch.js';

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
): Promise<{ reason: string; checkRuns: CheckResult[] } | null> {
  // `behind_by` counts the branch's commits the head lacks; per_page 1 keeps the answer small.
  const compared = await getData<{ behind_by: number }>(client, 'GET /repos/{owner}/{repo}/compare/{basehead}', { ...repoParams(repo), basehead: `${target.baseSha}...${head.headSha}`, per_page: 1 });
  if (compared.behind_by !== 0) return null;
  const { checkRuns, statuses } = await readCommitChecks(client, repo, head.headSha, required);
  const verdict = decideChecks(required, checkRuns, statuses);
  if (verdict.verdict !== 'passed') return null;
  return {
    reason: `#${head.prNumber} was up to date with ${target.branch} (${target.baseSha.slice(0, 7)}) and its own required checks (${required.join(', ')}) had passed on ${head.headSha.slice(0, 7)}: they tested the content that lands, so no second CI run was spent.`,
    checkRuns: verdict.checkRuns,
  };
}

/** GitHub's names for the queue's merge methods. */
const GITHUB_METHOD = { merge_commit: 'merge', squash: 'squash', rebase: 'rebase' } as const;

/**
 * Lands a direct merge with GitHub's own merge of the PR, in the queue's
 * method: the PR is marked merged, and GitHub itself checks its protection
 * (the required checks on the head, approvals). The head must be the one whose
 * checks gave the verdict (`sha`), and the branch must still be where it was
 * then: otherwise nothing lands and the queue rebuilds (the PR, behind now, gets
 * a real run). Safe to repeat: a PR this merge already landed answers ok.
 */
export async function landDirectly(client: GitHubClient, request: MergeRequest, log: GitHubLog): Promise<MergeOutcome> {
  const { repo, targetBranch } = request;
  const head = request.heads[0];
  if (!head || request.heads.length !== 1) return { ok: false, reason: 'blocked', message: `a direct merge lands one pull request, run ${request.runId} has ${request.heads.length}` };
  const pr = await getData<PullRequestData & { merge_commit_sha?: string | null }>(client, 'GET /repos/{owner}/{repo}/pulls/{pull_number}', { ...repoParams(repo), pull_number: head.prNumber });
  if (pr.merged && pr.merge_commit_sha && pr.head.sha === head.headSha) return { ok: true, newBaseSha: pr.merge_commit_sha };
  if (pr.state !== 'open' || pr.base.ref !== targetBranch) return { ok: false, reason: 'pr_closed' };
  if (pr.head.sha !== head.headSha) return { ok: false, reason: 'head_changed' };
  if ((await readBranch(client, repo, targetBranch)) !== request.expectedBaseSha) return { ok: false, reason: 'base_moved' };
  const message = landingMessage(head, request.mergeMethod);
  const [title, ...rest] = message.split('\n');
  try {
    const merged = await getData<{ sha: string }>(client, 'PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge', {
      ...repoParams(repo),
      pull_number: head.prNumber,
      sha: head.headSha,
      merge_method: GITHUB_METHOD[request.mergeMethod],
      commit_title: title ?? message,
      commit_message: rest.join('\n').trim(),
    });
    log.info({ repo: `${repo.owner}/${repo.name}`, branch: targetBranch, runId: request.runId, pr: head.prNumber, newBaseSha: merged.sha }, 'landed directly');
    return { ok: true, newBaseSha: merged.sha };
  } catch (error) {
    const why = messageOf(error);
    // The branch moved under the merge (or the up-to-date rule noticed it first): rebuilt, and then tested.
    if (failedWith(error, 405) && /base branch was modified|out of date|not up to date/i.test(why)) return { ok: false, reason: 'base_moved' };
    if (failedWith(error, 409)) return { ok: false, reason: 'head_changed' };
    if (!failedWith(error, 403, 405, 422)) throw error;
    // GitHub will not merge this PR (approvals missing, a rule it breaks): its reason, and it alone leaves the queue.
    return { ok: false, reason: 'refused', prNumber: head.prNumber, message: why };
  }
}
