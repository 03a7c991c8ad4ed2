import type { RepoRef } from '../../domain/repo.js';
import { readBranchPolicy, requiredCheckNames } from './branch-policy.js';
import { decideChecks } from './check-outcome.js';
import { readCommitChecks } from './commit-checks.js';
import type { GitHubClient, GitHubLog } from './github-client.js';

/**
 * Whether GitHub's `mergeable_state: blocked` only waits for required checks
 * of the PR's head that have not reported yet (running, queued, re-run, or not
 * started), rather than a failed check or a missing review. GitHub gives one
 * word for all of these; the queue must not demote an admitted PR, and lose its
 * place, for the first (a re-run of a flaky check on the PR, or the queue's own
 * check run when protection requires it). A failed required check, or none
 * required at all (so a review or another rule blocks), is a real block.
 * Costs two or three reads, only for blocked PRs.
 */
export async function blockedOnlyByPendingChecks(client: GitHubClient, repo: RepoRef, pr: { baseBranch: string; headSha: string }, log?: GitHubLog): Promise<boolean> {
  const names = requiredCheckNames(await readBranchPolicy(client, repo, pr.baseBranch, log));
  const required = [...new Set([...names.protection, ...names.rulesets])];
  if (required.length === 0) return false;
  const { checkRuns, statuses } = await readCommitChecks(client, repo, pr.headSha, required);
  return decideChecks(required, checkRuns, statuses).verdict === 'waiting';
}
