import type { RepoRef } from '../../domain/repo.js';
import type { MergeOutcome, MergeRequest } from '../../ports/git-host.js';
import { failedWith, getData, messageOf, readAllPages, repoParams, type GitHubClient, type GitHubLog } from './github-client.js';
import type { PullRequestData, PullRequestListItem } from './github-types.js';
import { readBranch } from './test-branch.js';

/** What an operator does when GitHub will not let the App move the branch. */
export const LANDING_HINT =
  'The queue lands a passed run by moving the branch to the tested commit: give the App "Contents: write", add it to the bypass list of "Require a pull request before merging" (classic protection) or of the ruleset, and do not require the queue\'s own "Merge Queue" check on the branch. Then resume the queue (updateQueue).';

/**
 * Lands a passed run by fast-forwarding the target branch to the commit the
 * run tested (bors's way, and GitHub's own queue's): what lands is what was
 * tested, by construction, a whole batch in one ref update, and "branch out
 * of date" cannot happen. GitHub marks a PR merged when its head becomes part
 * of its base, which a merge commit does; squashed and replayed PRs are closed
 * with a comment naming the commit that landed them, as GitHub cannot be told
 * they were merged.
 *
 * Safe to repeat: a run already landed (the branch is at the tested commit)
 * answers ok again.
 */
export async function landTestedCommit(
  client: GitHubClient,
  request: MergeRequest,
  testedSha: string | null,
  log: GitHubLog,
  /** The tested commit is the (lone) PR's head itself (a direct merge): GitHub marks it merged, nothing to close. */
  options: { landsPullRequestHead?: boolean } = {},
): Promise<MergeOutcome> {
  const closesPullRequests = request.mergeMethod !== 'merge_commit' && !options.landsPullRequestHead;
  const { repo, targetBranch } = request;
  const where = { repo: `${repo.owner}/${repo.name}`, branch: targetBranch, runId: request.runId };
  if (!testedSha) return { ok: false, reason: 'blocked', message: `the commit run ${request.runId} tested is unknown, so nothing can land from it` };
  const prs: PullRequestJson[] = [];
  const current = await currentPullRequests(client, repo, targetBranch, request.heads.map((h) => h.prNumber));
  for (const head of request.heads) {
    const pr = current.get(head.prNumber);
    if (!pr || pr.state !== 'open' || pr.merged || pr.base.ref !== targetBranch) {
      // Closed by an earlier attempt of this very landing: it happened (and the PRs it had not closed yet are closed now).
      if ((await readBranch(client, repo, targetBranch)) === testedSha) {
        const stillOpen = [...current.values()].filter((p) => p.state === 'open' && !p.merged);
        if (closesPullRequests) await closeLanded(client, repo, stillOpen, testedSha, request);
        return { ok: true, newBaseSha: testedSha };
      }
      return { ok: false, reason: 'pr_closed' };
    }
    // A push after the test: landing now would land the old head and leave the PR open.
    if (pr.head.sha !== head.headSha) return { ok: false, reason: 'head_changed' };
    prs.push(pr);
  }
  try {
    await client.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { ...repoParams(repo), ref: `heads/${targetBranch}`, sha: testedSha, force: false });
  } catch (error) {
    if (failedWith(error, 422) && /fast.?forward/i.test(messageOf(error))) return { ok: false, reason: 'base_moved' };
    if (!failedWith(error, 403, 404, 409, 422)) throw error;
    log.error({ ...where, testedSha, err: error }, 'GitHub refused to move the branch to the tested commit');
    return { ok: false, reason: 'blocked', message: `GitHub refused to move ${targetBranch} to the tested commit ${testedSha.slice(0, 7)}: ${messageOf(error)}. ${LANDING_HINT}` };
  }
  log.info({ ...where, newBaseSha: testedSha, prs: prs.map((p) => p.number) }, 'landed the tested commit');
  if (closesPullRequests) await closeLanded(client, repo, prs, testedSha, request);
  return { ok: true, newBaseSha: testedSha };
}

/** What landing looks at in a PR, whether listed or read alone. */
interface PullRequestJson {
  number: number;
  state: string;
  merged?: boolean | null;
  base: { ref: string };
  head: { sha: string };
}

/**
 * The PRs as GitHub has them now: one GET for a lone PR, else the open PRs
 * into the branch, listed (a page of 100 holds a batch; a PR not among the open
 * ones is closed, or merged, and read alone to say which).
 */
async function currentPullRequests(client: GitHubClient, repo: RepoRef, base: string, numbers: number[]): Promise<Map<number, PullRequestJson>> {
  const found = new Map<number, PullRequestJson>();
  if (numbers.length > 1) {
    const open = await readAllPages(client, 'GET /repos/{owner}/{repo}/pulls', { ...repoParams(repo), state: 'open', base }, (data) => data as PullRequestListItem[]);
    for (const pr of open) if (numbers.includes(pr.number)) found.set(pr.number, { ...pr, merged: false });
  }
  for (const number of numbers) {
    if (!found.has(number)) found.set(number, await getData<PullRequestData>(client, 'GET /repos/{owner}/{repo}/pulls/{pull_number}', { ...repoParams(repo), pull_number: number }));
  }
  return found;
}

/** Squashed or replayed PRs are not their heads: GitHub leaves them open, so the queue closes them and says where they went. */
async function closeLanded(client: GitHubClient, repo: RepoRef, prs: PullRequestJson[], landedSha: string, request: MergeRequest): Promise<void> {
  for (const pr of prs) {
    const how = request.mergeMethod === 'squash' ? 'squashed' : 'rebased';
    await client.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repoParams(repo),
      issue_number: pr.number,
      body: `Landed on \`${request.targetBranch}\` by the merge queue, ${how}, in ${landedSha}. GitHub marks a pull request merged only when its own commits land, so the queue closes it.`,
    });
    await client.request('PATCH /repos/{owner}/{repo}/pulls/{pull_number}', { ...repoParams(repo), pull_number: pr.number, state: 'closed' });
  }
}
