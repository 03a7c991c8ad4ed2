import type { RepoRef } from '../../domain/repo.js';
import type { TestedHead } from '../../ports/git-host.js';
import { failedWith, getData, repoParams, type GitHubClient, type GitHubLog } from './github-client.js';
import type { GitCommitData, MergeCommitData, PullRequestListItem, RefData } from './github-types.js';

/** Where a run is built: one branch per run, so runs never share state. */
export function testBranchName(targetBranch: string, runId: string): string {
  return `mq/${targetBranch}/${runId}`;
}

export function testMergeMessage(prNumber: number, targetBranch: string): string {
  return `Merge #${prNumber} into the queue's test of ${targetBranch}`;
}

export type BuiltTestBranch = { ok: true; sha: string } | { ok: false; conflictWith: number };

/**
 * Builds `branch` as base + each head merged in order, through the Git API
 * (no clone). Safe to repeat: a branch left by an earlier attempt of the same
 * run is kept when it is already exactly base + heads (so CI does not start
 * over), and otherwise reset to the base and built again.
 */
export async function buildTestBranch(
  client: GitHubClient,
  repo: RepoRef,
  branch: string,
  targetBranch: string,
  baseSha: string,
  heads: TestedHead[],
): Promise<BuiltTestBranch> {
  const existing = await createRef(client, repo, branch, baseSha);
  if (existing !== null) {
    if (await isBuiltFrom(client, repo, existing, baseSha, heads)) return { ok: true, sha: existing };
    await client.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { ...repoParams(repo), ref: `heads/${branch}`, sha: baseSha, force: true });
  }
  let tip = baseSha;
  for (const head of heads) {
    try {
      const response = await client.request('POST /repos/{owner}/{repo}/merges', {
        ...repoParams(repo),
        base: branch,
        head: head.headSha,
        commit_message: testMergeMessage(head.prNumber, targetBranch),
      });
      // 204: the head is already in the branch (nothing to merge), so the tip stays.
      if (response.status === 201) tip = (response.data as MergeCommitData).sha;
    } catch (error) {
      if (failedWith(error, 409)) return { ok: false, conflictWith: head.prNumber };
      throw error;
    }
  }
  return { ok: true, sha: tip };
}

/** Creates the branch at `sha`; when it already exists, returns where it points instead. */
async function createRef(client: GitHubClient, repo: RepoRef, branch: string, sha: string): Promise<string | null> {
  try {
    await client.request('POST /repos/{owner}/{repo}/git/refs', { ...repoParams(repo), ref: `refs/heads/${branch}`, sha });
    return null;
  } catch (error) {
    // 422 is also "no such commit": only an existing branch makes it a repeat.
    if (!failedWith(error, 422)) throw error;
    const head = await readBranch(client, repo, branch);
    if (head === null) throw error;
    return head;
  }
}

/** Whether `tip` is base + heads as this module merges them: each commit's parents are (previous, head). */
async function isBuiltFrom(client: GitHubClient, repo: RepoRef, tip: string, baseSha: string, heads: TestedHead[]): Promise<boolean> {
  let sha = tip;
  for (const head of [...heads].reverse()) {
    const commit = await getData<GitCommitData>(client, 'GET /repos/{owner}/{repo}/git/commits/{commit_sha}', { ...repoParams(repo), commit_sha: sha });
    const [previous, merged] = commit.parents;
    if (commit.parents.length !== 2 || !previous || merged?.sha !== head.headSha) return false;
    sha = previous.sha;
  }
  return sha === baseSha;
}

/** Where a branch points, or null when there is no such branch. */
export async function readBranch(client: GitHubClient, repo: RepoRef, branch: string): Promise<string | null> {
  try {
    const ref = await getData<RefData>(client, 'GET /repos/{owner}/{repo}/git/ref/{ref}', { ...repoParams(repo), ref: `heads/${branch}` });
    return ref.object.sha;
  } catch (error) {
    if (failedWith(error, 404)) return null;
    throw error;
  }
}

/** The draft PR some CI systems need before they test a branch. */
export async function openTestPullRequest(
  client: GitHubClient,
  repo: RepoRef,
  branch: string,
  targetBranch: string,
  runId: string,
  heads: TestedHead[],
  log: GitHubLog,
): Promise<void> {
  try {
    await client.request('POST /repos/{owner}/{repo}/pulls', {
      ...repoParams(repo),
      title: `Merge queue test ${runId}`,
      head: branch,
      base: targetBranch,
      draft: true,
      body: `The merge queue tests ${heads.map((h) => `#${h.prNumber}`).join(', ')} on top of \`${targetBranch}\` here. Do not merge: the queue closes this when the test ends.`,
    });
  } catch (error) {
    // 422: it exists from an earlier attempt, or the repository has no draft PRs; the run goes on either way.
    if (!failedWith(error, 422)) throw error;
    log.warn({ err: error, repo: `${repo.owner}/${repo.name}`, branch }, 'could not open the draft pull request for a test branch');
  }
}

/**
 * Ends a test branch: closes its draft PR if one was opened (looked up, as a
 * restart forgets what was opened), then deletes the branch. Both are no-ops
 * when already done, so every ending of a run can call it.
 */
export async function deleteTestBranch(client: GitHubClient, repo: RepoRef, branch: string): Promise<void> {
  const open = await getData<PullRequestListItem[]>(client, 'GET /repos/{owner}/{repo}/pulls', {
    ...repoParams(repo),
    head: `${repo.owner}:${branch}`,
    state: 'open',
  });
  for (const pr of open) {
    await client.request('PATCH /repos/{owner}/{repo}/pulls/{pull_number}', { ...repoParams(repo), pull_number: pr.number, state: 'closed' });
  }
  try {
    await client.request('DELETE /repos/{owner}/{repo}/git/refs/{ref}', { ...repoParams(repo), ref: `heads/${branch}` });
  } catch (error) {
    // GitHub answers 422 "Reference does not exist" (sometimes 404) for a branch already gone.
    if (!failedWith(error, 404, 422)) throw error;
  }
}
