import type { MergeMethod } from '../../domain/queue-config.js';
import type { RepoRef } from '../../domain/repo.js';
import type { MergeOutcome, MergeRequest } from '../../ports/git-host.js';
import { assertNever } from '../../engine/assert-never.js';
import { failedWith, getData, repoParams, type GitHubClient, type GitHubLog } from './github-client.js';
import type { GitCommitData, PullRequestData, PullRequestMergeData } from './github-types.js';
import { parseMergeCommitTitle } from './merge-commit-title.js';
import { readBranch } from './test-branch.js';

/** GitHub's name for each of the queue's merge methods. */
export function gitHubMergeMethod(method: MergeMethod): 'merge' | 'squash' | 'rebase' {
  switch (method) {
    case 'merge_commit':
      return 'merge';
    case 'squash':
    case 'rebase':
      return method;
    default:
      return assertNever(method);
  }
}

/**
 * Merges the tested PRs, in order, after re-checking that nothing moved since
 * they were tested: the base is where the run started, every PR is open and
 * still at the tested head. GitHub re-checks the head itself (`sha`), so a
 * push between our check and the merge is refused too.
 */
export async function mergePullRequests(
  client: GitHubClient,
  request: MergeRequest,
  testedSha: string | null,
  log: GitHubLog,
): Promise<MergeOutcome> {
  const { repo } = request;
  const where = { repo: `${repo.owner}/${repo.name}`, branch: request.targetBranch, runId: request.runId };
  if ((await readBranch(client, repo, request.targetBranch)) !== request.expectedBaseSha) return { ok: false, reason: 'base_moved' };
  const prs: PullRequestData[] = [];
  for (const head of request.heads) {
    const pr = await getData<PullRequestData>(client, 'GET /repos/{owner}/{repo}/pulls/{pull_number}', { ...repoParams(repo), pull_number: head.prNumber });
    // A PR retargeted to another branch has left this queue: merging it now would land it elsewhere.
    if (pr.state !== 'open' || pr.merged || pr.base.ref !== request.targetBranch) return { ok: false, reason: 'pr_closed' };
    if (pr.head.sha !== head.headSha) return { ok: false, reason: 'head_changed' };
    prs.push(pr);
  }
  const method = gitHubMergeMethod(request.mergeMethod);
  let newBaseSha = request.expectedBaseSha;
  for (const [i, pr] of prs.entries()) {
    // A rebase makes no merge commit, so there is no title to set.
    const title = method === 'rebase' ? undefined : parseMergeCommitTitle(pr.body);
    try {
      const merged = await getData<PullRequestMergeData>(client, 'PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge', {
        ...repoParams(repo),
        pull_number: pr.number,
        merge_method: method,
        sha: request.heads[i]?.headSha,
        ...(title ? { commit_title: title } : {}),
      });
      newBaseSha = merged.sha;
    } catch (error) {
      // 405: GitHub will not merge it (protection, method not allowed); 409: the head moved after all.
      if (!failedWith(error, 405, 409)) throw error;
      log.error({ ...where, pr: pr.number, err: error, mergedBefore: prs.slice(0, i).map((p) => p.number) }, 'GitHub refused to merge a tested pull request');
      return { ok: false, reason: 'merge_failed' };
    }
  }
  try {
    await compareWithTested(client, repo, newBaseSha, testedSha, where, log);
  } catch (error) {
    // The PRs are merged: a failed comparison must not make the queue believe otherwise.
    log.error({ ...where, newBaseSha, testedSha, err: error }, 'merged, but could not compare the merged content with the tested content');
  }
  return { ok: true, newBaseSha };
}

/**
 * The branch's content after the merge must be the content that was tested.
 * GitHub makes new commits when it merges (a squash or rebase recomputes each
 * change on the base), so commits differ from the test branch, but trees must
 * not. When they do, the merge has already happened and cannot be taken back
 * without rewriting a protected branch, so the outcome stays ok (the engine
 * must know the PRs are in) and the difference is logged as an error for
 * people to look at.
 */
async function compareWithTested(client: GitHubClient, repo: RepoRef, newBaseSha: string, testedSha: string | null, where: object, log: GitHubLog): Promise<void> {
  if (!testedSha) {
    log.warn({ ...where, newBaseSha }, 'merged, but the tested commit is unknown: the merged content was not compared with it');
    return;
  }
  const treeOf = async (sha: string) =>
    (await getData<GitCommitData>(client, 'GET /repos/{owner}/{repo}/git/commits/{commit_sha}', { ...repoParams(repo), commit_sha: sha })).tree.sha;
  const [merged, tested] = await Promise.all([treeOf(newBaseSha), treeOf(testedSha)]);
  if (merged !== tested) {
    log.error(
      { ...where, newBaseSha, testedSha, mergedTree: merged, testedTree: tested },
      'MERGED CONTENT DIFFERS FROM TESTED CONTENT: the branch now holds a tree the queue never tested',
    );
  }
}
