import type { RepoRef } from '../../domain/repo.js';
import type { MergeMethod } from '../../domain/queue-config.js';
import type { TestedHead, TestRunRequest } from '../../ports/git-host.js';
import { HostContention } from '../../ports/host-errors.js';
import { failedWith, getData, messageOf, readAllPages, repoParams, type GitHubClient, type GitHubLog } from './github-client.js';
import type { GitCommitData, MergeCommitData, PullRequestCommitData, PullRequestListItem, RefData } from './github-types.js';
import { parseMergeCommitTitle } from './merge-commit-title.js';

/** Where a run is built: one branch per run, so runs never share state. */
export function testBranchName(targetBranch: string, runId: string): string {
  return `mq/${targetBranch}/${runId}`;
}

/**
 * Where the queue assembles its runs before testing them: a prefix CI does not
 * watch (`mq/**` is the documented trigger), so assembling N commits starts no
 * CI and the test branch appears once, at its final commit. One per queue,
 * kept between runs (moved to each run's start, never deleted: a request saved
 * per run); a queue's runs are built one at a time by the replica holding its lease.
 */
export function stagingBranchName(targetBranch: string): string {
  return `mq-staging/${targetBranch}`;
}

/** The message of the commit that lands a PR; a `merge-commit-title:` line in its description wins. */
export function landingMessage(head: TestedHead, method: MergeMethod): string {
  const chosen = head.body ? parseMergeCommitTitle(head.body) : null;
  const title = head.title ?? `#${head.prNumber}`;
  if (method === 'merge_commit') return `${chosen ?? `Merge pull request #${head.prNumber}`}\n\n${title}`;
  return chosen ?? `${title} (#${head.prNumber})`;
}

/**
 * Built; or a PR's content conflicts with what is before it (that PR's verdict);
 * or a PR cannot be built this way at all (`unbuildable`: that PR's verdict, with why);
 * or a PR's head is not among its commits (`headChanged`: pushed to meanwhile).
 */
export type BuiltTestBranch =
  | { ok: true; sha: string }
  | { ok: false; conflictWith: number }
  | { ok: false; unbuildable: { prNumber: number; message: string } }
  | { ok: false; headChanged: number };

/** "Lists a maximum of 250 commits for a pull request" (GitHub's pulls/list-commits): a rebase replays that list. */
const MAX_LISTED_COMMITS = 250;

/**
 * Builds `branch` as base + each head, through the Git API (no clone), made of
 * the very commits that will land: a merge commit per PR (merge_commit), one
 * squashed commit per PR (squash), or each PR commit replayed (rebase). Landing
 * is then a fast-forward to the tested commit, so what lands is what was tested.
 * Assembled on a staging branch; the test branch is created once, at the end,
 * so CI runs once per run. Safe to repeat: a test branch that exists already
 * is the finished build of this run (run ids are never reused), and it is
 * kept as it is, so CI does not start over.
 */
export async function buildTestBranch(client: GitHubClient, repo: RepoRef, branch: string, request: TestRunRequest): Promise<BuiltTestBranch> {
  const start = request.buildOn ?? { sha: request.baseSha, heads: 0 };
  const staging = stagingBranchName(request.targetBranch);
  await pointBranch(client, repo, staging, start.sha);
  let tip = start.sha;
  for (const head of request.heads.slice(start.heads)) {
    const built = await applyHead(client, repo, staging, tip, head, request.mergeMethod);
    if (built === null) return { ok: false, conflictWith: head.prNumber };
    if (typeof built !== 'string') return 'unbuildable' in built ? { ok: false, unbuildable: { prNumber: head.prNumber, message: built.unbuildable } } : { ok: false, headChanged: head.prNumber };
    tip = built;
  }
  return { ok: true, sha: await createOrKeep(client, repo, branch, tip) };
}

/** Applies one PR on top of `tip` (the staging branch's head); the new tip, null on a conflict, or why it will not be built. */
async function applyHead(client: GitHubClient, repo: RepoRef, staging: string, tip: string, head: TestedHead, method: MergeMethod): Promise<string | null | { unbuildable: string } | { headChanged: true }> {
  if (method === 'rebase') {
    // Pages of 100 (GitHub's most), at most 250 commits in all.
    const commits = await readAllPages(client, 'GET /repos/{owner}/{repo}/pulls/{pull_number}/commits', { ...repoParams(repo), pull_number: head.prNumber }, (data) => data as PullRequestCommitData[]);
    // The head to test and what it is built on, parents first: replaying anything else would build (and land) part of
    // the PR, or another head, as if it were the one tested.
    const replay = ancestryOf(commits, head.headSha);
    if (!replay) return commits.length >= MAX_LISTED_COMMITS ? { unbuildable: replayRefusal(head) } : { headChanged: true };
    let replayed = tip;
    for (const commit of replay) {
      const merged = await mergeInto(client, repo, staging, replayed, commit.sha, `replay ${commit.sha}`);
      if (merged === 'conflict') return null;
      if (merged === 'contained') continue;
      replayed = await singleParentCommit(client, repo, staging, merged.tree, replayed, commit.commit.message, commit.commit.author ?? undefined);
    }
    return replayed;
  }
  const merged = await mergeInto(client, repo, staging, tip, head.headSha, landingMessage(head, 'merge_commit'));
  if (merged === 'conflict') return null;
  if (merged === 'contained') return tip;
  if (method === 'merge_commit') return merged.sha;
  return singleParentCommit(client, repo, staging, merged.tree, tip, landingMessage(head, 'squash'));
}

/** Why a PR cannot be rebased by replaying the commits GitHub lists for it. */
function replayRefusal(head: TestedHead): string {
  return `#${head.prNumber} has more than ${MAX_LISTED_COMMITS} commits, and GitHub lists only the first ${MAX_LISTED_COMMITS} of a pull request, so the queue cannot rebase it by replaying them: squash its commits, then submit it again.`;
}

/**
 * The listed commits the head is built from (itself included), each after its parents; null when the head is not
 * listed. GitHub lists a PR's commits by date, not by ancestry (after a rebase that reorders them the last listed
 * need not be the head), so the order comes from the parents.
 */
export function ancestryOf(commits: readonly PullRequestCommitData[], headSha: string): PullRequestCommitData[] | null {
  const bySha = new Map(commits.map((commit) => [commit.sha, commit]));
  if (!bySha.has(headSha)) return null;
  const ordered: PullRequestCommitData[] = [];
  const placed = new Set<string>();
  // Depth first from the head, a commit placed once all its listed parents are: parents first, the head last.
  const stack: Array<{ sha: string; expanded: boolean }> = [{ sha: headSha, expanded: false }];
  while (stack.length > 0) {
    const top = stack.pop() as { sha: string; expanded: boolean };
    if (placed.has(top.sha)) continue;
    const commit = bySha.get(top.sha) as PullRequestCommitData;
    if (top.expanded) {
      placed.add(top.sha);
      ordered.push(commit);
      continue;
    }
    stack.push({ sha: top.sha, expanded: true });
    for (const parent of [...commit.parents].reverse()) if (bySha.has(parent.sha) && !placed.has(parent.sha)) stack.push({ sha: parent.sha, expanded: false });
  }
  return ordered;
}

type Merged = { sha: string; tree: string } | 'contained' | 'conflict';

/**
 * The staging branch moved under a build: another build used it at the same time (a replica whose lease ran out
 * still finishing its build while the next writer starts its own). What was merged is not what the run names, so
 * nothing is built from it. A lost race, not an outage: the runner retries the start with back-off, and the retry
 * builds again from the run's base.
 */
export class StagingMoved extends HostContention {
  override name = 'StagingMoved';
}

/**
 * The merges API: a merge commit of `head` onto the branch, which must be at `onto` (the build's tip so far). The
 * API merges into whatever the branch is now, so the merge's first parent says whether it was still there; an
 * answer that the head is in the branch already (204) is checked against `onto` itself (GitHub's compare).
 */
async function mergeInto(client: GitHubClient, repo: RepoRef, branch: string, onto: string, head: string, message: string): Promise<Merged> {
  let response;
  try {
    response = await client.request('POST /repos/{owner}/{repo}/merges', { ...repoParams(repo), base: branch, head, commit_message: message });
  } catch (error) {
    // GitHub's merge conflict is a 409 saying so. A 409 may also be a rule refusing the merge commit on the staging
    // branch (protection or an organisation's ruleset on every branch): the host's refusal, never the PR's conflict
    // (found by review: every PR failed as merge_conflict).
    if (failedWith(error, 409) && /merge conflict/i.test(messageOf(error))) return 'conflict';
    throw error;
  }
  if (response.status !== 201) {
    // 204: the head is in the branch already (nothing to merge); in the build so far, unless the branch moved.
    const { status } = await getData<{ status: string }>(client, 'GET /repos/{owner}/{repo}/compare/{basehead}', { ...repoParams(repo), basehead: `${head}...${onto}`, per_page: 1 });
    if (status === 'ahead' || status === 'identical') return 'contained';
    throw new StagingMoved(`${branch} moved while the run was built: GitHub says ${head.slice(0, 7)} is in it, but not in the build's ${onto.slice(0, 7)}`);
  }
  const data = response.data as MergeCommitData;
  if (data.parents[0]?.sha !== onto) throw new StagingMoved(`${branch} moved while the run was built: the merge of ${head.slice(0, 7)} went onto ${data.parents[0]?.sha.slice(0, 7) ?? 'nothing'}, not ${onto.slice(0, 7)}`);
  return { sha: data.sha, tree: data.commit.tree.sha };
}

/** A commit with the merged tree and one parent (a squash, or a replayed commit); the staging branch moves to it. */
async function singleParentCommit(
  client: GitHubClient,
  repo: RepoRef,
  staging: string,
  tree: string,
  parent: string,
  message: string,
  author?: { name?: string; email?: string; date?: string },
): Promise<string> {
  const commit = await getData<GitCommitData>(client, 'POST /repos/{owner}/{repo}/git/commits', {
    ...repoParams(repo),
    message,
    tree,
    parents: [parent],
    ...(author?.name && author.email ? { author: { name: author.name, email: author.email, ...(author.date ? { date: author.date } : {}) } } : {}),
  });
  try {
    await client.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { ...repoParams(repo), ref: `heads/${staging}`, sha: commit.sha, force: true });
  } catch (error) {
    throw raceOnStaging(error, staging);
  }
  return commit.sha;
}

/**
 * GitHub's 422 "Reference update failed" answers an update that raced another of the same ref (on the staging
 * branch, another build moving it: a replica finishing late), and a ruleset's refusal too. A lost race the runner asks
 * again with back-off, as StagingMoved; thrown as it was, one race stopped the queue (found by review). Lost every
 * time, the runner settles it as the refusal it carries (host-errors.ts refusalBehind).
 */
function raceOnStaging(error: unknown, staging: string): unknown {
  if (!refUpdateFailed(error)) return error;
  // GitHub's answer kept: a ruleset refuses with the same words every time, and the runner then settles it as that.
  return new StagingMoved(`${staging} could not be moved this time (GitHub: ${messageOf(error)}): another build moving it, or a rule`, { cause: error });
}

function refUpdateFailed(error: unknown): boolean {
  return failedWith(error, 422) && /reference update failed/i.test(messageOf(error));
}

/** Moves the branch to `sha` (it usually exists: one request), creating it the first time. */
async function pointBranch(client: GitHubClient, repo: RepoRef, branch: string, sha: string): Promise<void> {
  try {
    await client.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { ...repoParams(repo), ref: `heads/${branch}`, sha, force: true });
  } catch (error) {
    const raced = raceOnStaging(error, branch);
    if (raced !== error) throw raced;
    // 422 "Reference does not exist" (also "no such commit": then the create fails too, and says so).
    if (!failedWith(error, 404, 422)) throw error;
    try {
      await client.request('POST /repos/{owner}/{repo}/git/refs', { ...repoParams(repo), ref: `refs/heads/${branch}`, sha });
    } catch (createError) {
      if (!refExists(createError)) throw createError;
      // It exists. The move said it did not: it was created since (by this very create, whose answer a 5xx lost and
      // the client asked again, or by another build; found on the fake GitHub: taken for a refusal, the queue stopped
      // landing), so it is moved now. Otherwise the move itself was refused (a ruleset against force pushes, say), and
      // its answer says why.
      if (!refAbsent(error)) throw error;
      await moveCreatedMeanwhile(client, repo, branch, sha);
    }
  }
}

/** GitHub's answer to a create of a branch that exists: 422 "Reference already exists". */
function refExists(error: unknown): boolean {
  return failedWith(error, 422) && /already exists/i.test(messageOf(error));
}

/** GitHub's answer to a move of a branch that does not exist: 422 "Reference does not exist", sometimes 404. */
function refAbsent(error: unknown): boolean {
  return failedWith(error, 404) || (failedWith(error, 422) && /reference does not exist/i.test(messageOf(error)));
}

async function moveCreatedMeanwhile(client: GitHubClient, repo: RepoRef, branch: string, sha: string): Promise<void> {
  try {
    await client.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { ...repoParams(repo), ref: `heads/${branch}`, sha, force: true });
  } catch (error) {
    const raced = raceOnStaging(error, branch);
    if (raced !== error || !refAbsent(error)) throw raced;
    // Said to exist and not to exist at once: a moment's disagreement between GitHub's replicas, asked again later
    // (the runner settles it as GitHub's answer if it keeps saying so).
    throw new StagingMoved(`${branch} exists, GitHub says, but its move answers that it does not`, { cause: error });
  }
}

/**
 * GitHub said a branch exists ("Reference already exists") that its read says is absent: the read came from a
 * replica behind the write that created it (a moment ago, by an earlier attempt of the same action). A lost race,
 * not a refusal: the runner asks again with back-off, and by then the read finds it. Found by review: a landing
 * asked again right after its first attempt created its landing branch threw the 422, which the runner took for a
 * refusal, and the queue stopped landing. Also a create answered "Reference update failed" (a race, or a rule). Lost
 * every time, the runner settles it as GitHub's answer it carries (a name that clashes with another branch, a rule).
 */
export class BranchReadBehind extends HostContention {
  override name = 'BranchReadBehind';
}

/**
 * Creates the branch at `sha`; when it exists (an earlier attempt finished), where it points. Kept, not moved to
 * `sha`: it is this run's finished build, maybe the very commit an earlier attempt landed.
 */
async function createOrKeep(client: GitHubClient, repo: RepoRef, branch: string, sha: string): Promise<string> {
  try {
    await client.request('POST /repos/{owner}/{repo}/git/refs', { ...repoParams(repo), ref: `refs/heads/${branch}`, sha });
    return sha;
  } catch (error) {
    if (!failedWith(error, 422)) throw error;
    const existing = await readBranch(client, repo, branch);
    if (existing !== null) return existing;
    if (refExists(error)) throw new BranchReadBehind(`${branch} exists, GitHub says, but reads as absent: a read behind its creation`, { cause: error });
    if (refUpdateFailed(error)) throw new BranchReadBehind(`${branch} could not be created this time (GitHub: ${messageOf(error)})`, { cause: error });
    throw error;
  }
}

/** Deletes a branch; one already gone is fine. */
async function deleteRef(client: GitHubClient, repo: RepoRef, branch: string): Promise<void> {
  try {
    await client.request('DELETE /repos/{owner}/{repo}/git/refs/{ref}', { ...repoParams(repo), ref: `heads/${branch}` });
  } catch (error) {
    // GitHub answers 422 "Reference does not exist" (sometimes 404) for a branch already gone.
    if (!failedWith(error, 404, 422)) throw error;
  }
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
export async function deleteTestBranch(client: GitHubClient, repo: RepoRef, branch: string, options: { closeDraftPullRequest?: boolean } = {}): Promise<void> {
  // Only queues that open draft PRs for their test branches have one to close (a request saved per run otherwise).
  const open =
    options.closeDraftPullRequest === false
      ? []
      : await getData<PullRequestListItem[]>(client, 'GET /repos/{owner}/{repo}/pulls', { ...repoParams(repo), head: `${repo.owner}:${branch}`, state: 'open' });
  for (const pr of open) {
    await client.request('PATCH /repos/{owner}/{repo}/pulls/{pull_number}', { ...repoParams(repo), pull_number: pr.number, state: 'closed' });
  }
  await deleteRef(client, repo, branch);
}
