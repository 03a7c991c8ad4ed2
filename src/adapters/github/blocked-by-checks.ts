import type { RepoRef } from '../../domain/repo.js';
import { readBranchPolicy, requiredCheckNames, type BranchPolicy } from './branch-policy.js';
import { decideChecks } from './check-outcome.js';
import { readCommitChecks } from './commit-checks.js';
import { readAllPages, repoParams, type GitHubClient, type GitHubLog } from './github-client.js';
import type { PullRequestReviewData } from './github-types.js';

/** Ruleset rules that never block a PR's merge other than through its checks or reviews (both judged here). */
const RULES_JUDGED = new Set(['required_status_checks', 'pull_request', 'creation', 'deletion', 'non_fast_forward', 'required_linear_history']);
/** Reviewers GitHub counts an approval of (write access), as far as the review itself says. */
const COUNTED_ASSOCIATIONS = new Set(['OWNER', 'MEMBER', 'COLLABORATOR']);

/** The approvals the branch requires, or null when a rule the queue cannot judge from REST may block the PR. */
function reviewsRequired(policy: BranchPolicy): { approvals: number } | null {
  const protection = policy.protection;
  if (protection?.required_conversation_resolution?.enabled || protection?.required_signatures?.enabled || protection?.lock_branch?.enabled) return null;
  const reviews = protection?.required_pull_request_reviews;
  if (reviews?.require_code_owner_reviews || reviews?.require_last_push_approval) return null;
  let approvals = reviews ? (reviews.required_approving_review_count ?? 0) : -1;
  for (const rule of policy.rules) {
    if (!RULES_JUDGED.has(rule.type)) return null;
    if (rule.type !== 'pull_request') continue;
    const parameters = (rule.parameters ?? {}) as { required_approving_review_count?: number; require_code_owner_review?: boolean; require_last_push_approval?: boolean; required_review_thread_resolution?: boolean };
    if (parameters.require_code_owner_review || parameters.require_last_push_approval || parameters.required_review_thread_resolution) return null;
    approvals = Math.max(approvals, parameters.required_approving_review_count ?? 0);
  }
  // -1: no review rule at all (a request for changes does not block then).
  return { approvals };
}

/**
 * Whether the PR's reviews meet the requirement: enough approvals, and no reviewer's latest word a request for changes.
 * Only reviewers who may have write access count either way: GitHub blocks on a request for changes by someone with
 * write access, and a drive-by reviewer's (found by review: it demoted an admitted PR and lost its place). Members and
 * collaborators count, whatever their access: a request that blocks must never be ignored.
 */
async function reviewsMet(client: GitHubClient, repo: RepoRef, prNumber: number, approvals: number): Promise<boolean> {
  const reviews = await readAllPages(client, 'GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews', { ...repoParams(repo), pull_number: prNumber }, (data) => data as PullRequestReviewData[]);
  const latest = new Map<string, PullRequestReviewData>();
  for (const review of reviews) if (review.user && review.state !== 'COMMENTED' && review.state !== 'PENDING') latest.set(review.user.login, review);
  const verdicts = [...latest.values()].filter((review) => COUNTED_ASSOCIATIONS.has(review.author_association));
  if (verdicts.some((review) => review.state === 'CHANGES_REQUESTED')) return false;
  return verdicts.filter((review) => review.state === 'APPROVED').length >= approvals;
}

/**
 * Whether GitHub's `mergeable_state: blocked` only waits for required checks of
 * the PR's head that have not reported yet (running, queued, re-run, or not
 * started), rather than a failed check, a missing review or another rule. GitHub
 * gives one word for all of these; the queue must not demote an admitted PR, and
 * lose its place, for the first (a re-run of a flaky check on the PR, or the
 * queue's own check when protection requires it), and must for every other: the
 * queue lands by moving the branch, so GitHub's block is the only review gate.
 * So it answers true only when the branch's rules are all ones it can judge here
 * (required checks and approvals; code owners, last-push approval, resolved
 * conversations, signatures or an unknown ruleset rule answer false), a required
 * check is still waiting, none failed, and the reviews meet the requirement.
 * Only for blocked PRs: the PR's reviews (when a rule asks for approvals), then
 * its checks, plus the branch's rules (`policy`: the caller may keep them a while).
 */
export async function blockedOnlyByPendingChecks(
  client: GitHubClient,
  repo: RepoRef,
  pr: { number: number; baseBranch: string; headSha: string },
  options: { log?: GitHubLog; policy?: () => Promise<BranchPolicy> } = {},
): Promise<boolean> {
  const policy = await (options.policy ? options.policy() : readBranchPolicy(client, repo, pr.baseBranch, options.log));
  const reviews = reviewsRequired(policy);
  if (!reviews) return false;
  const names = requiredCheckNames(policy);
  const required = [...new Set([...names.protection, ...names.rulesets])];
  if (required.length === 0) return false;
  // Reviews first: the usual block of a PR labelled before its approval ends here, without reading its checks.
  if (reviews.approvals >= 0 && !(await reviewsMet(client, repo, pr.number, reviews.approvals))) return false;
  const { checkRuns, statuses } = await readCommitChecks(client, repo, pr.headSha, required);
  return decideChecks(required, checkRuns, statuses).verdict === 'waiting';
}
