import { setTimeout as sleep } from 'node:timers/promises';
import type { RepoRef } from '../../domain/repo.js';
import type { MergeOutcome, MergeRequest } from '../../ports/git-host.js';
import { isTransientHostError } from '../../ports/host-errors.js';
import { failedWith, getData, makeOnce, messageOf, NOT_REPEATED_BLIND, readAllPages, repoParams, sinceParameter, type GitHubClient, type GitHubLog } from './github-client.js';
import type { PullRequestData, PullRequestListItem } from './github-types.js';
import { buildTestBranch, deleteTestBranch, readBranch } from './test-branch.js';

/** What an operator does when GitHub will not let the App move the branch. */
export const LANDING_HINT =
  'The queue lands a passed run by moving the branch to the tested commit: give the App "Contents: write", add it to the bypass list of "Require a pull request before merging" (classic protection) or of the ruleset, and do not require the queue\'s own "Merge Queue" check on the branch. Then resume the queue (updateQueue).';

/**
 * GitHub now and then refuses a ref update with 422 "Reference update failed" and
 * takes the same update a moment later; a ruleset's refusal says so every time. It is
 * asked this many times, `refUpdateRetryMs` × the attempt apart, before it counts as a refusal.
 */
const REF_UPDATE_ATTEMPTS = 3;
const REF_UPDATE_RETRY_MS = 1_000;

/** Reads of a branch found behind the head the queue expects, before it counts as reset (headBeforeLanding). */
const STALE_READ_ATTEMPTS = 3;

/**
 * Lands a passed run by fast-forwarding the target branch to the commit the
 * run tested (bors's way, and GitHub's own queue's): what lands is what was
 * tested, by construction, a whole batch in one ref update, and "branch out
 * of date" cannot happen. GitHub marks a PR merged when its head becomes part
 * of its base, which a merge commit does; squashed and replayed PRs are closed
 * with a comment naming the commit that landed them, as GitHub cannot be told
 * they were merged.
 *
 * Safe to repeat: a run already landed (the branch holds the tested commit,
 * at it or under commits pushed since) answers ok again, and never lands twice:
 * an earlier attempt may have moved the branch and lost its answer (a time-out,
 * a 5xx after the write), or failed while closing the PRs. Closing them is best
 * effort: a refusal there is logged, the landing stands; a transient failure is
 * thrown (the runner retries it as an outage, and the retry finds it landed).
 * Transient failures of the update itself (5xx, rate limits) are thrown too.
 */
export async function landTestedCommit(
  client: GitHubClient,
  request: MergeRequest,
  testedSha: string | null,
  log: GitHubLog,
  options: {
    /** The tested commit is the (lone) PR's head itself (a direct merge): GitHub marks it merged, nothing to close. */
    landsPullRequestHead?: boolean;
    /** The wait before asking again after "Reference update failed", a branch read behind, or a comment failing (× the attempt); tests shorten it. */
    refUpdateRetryMs?: number;
  } = {},
): Promise<MergeOutcome> {
  const closesPullRequests = request.mergeMethod !== 'merge_commit' && !options.landsPullRequestHead;
  const { repo, targetBranch } = request;
  const where = { repo: `${repo.owner}/${repo.name}`, branch: targetBranch, runId: request.runId };
  if (!testedSha) return { ok: false, reason: 'blocked', message: `the commit run ${request.runId} tested is unknown, so nothing can land from it` };
  const retryMs = options.refUpdateRetryMs ?? REF_UPDATE_RETRY_MS;
  const prs: PullRequestJson[] = [];
  const current = await currentPullRequests(client, repo, targetBranch, request.heads.map((h) => h.prNumber));
  const testedHead = new Map(request.heads.map((h) => [h.prNumber, h.headSha]));
  for (const head of request.heads) {
    const pr = current.get(head.prNumber);
    const gone = !pr || pr.state !== 'open' || pr.merged || pr.base.ref !== targetBranch;
    if (gone || pr.head.sha !== head.headSha) {
      // Closed by an earlier attempt of this very landing (or merged by GitHub, as its head landed), or pushed to
      // after an earlier attempt landed it and lost its answer; the branch maybe moved on since: it happened. The
      // PRs it had not closed yet are closed now, but not one pushed to since: its new commits did not land, and
      // closeLanded, given the head that was tested, says so (the earlier attempt may have said "the queue closes it").
      const landed = await landedAlready(client, request, testedSha, retryMs);
      if (landed) {
        const stillOpen = [...current.values()].filter((p) => p.state === 'open' && !p.merged).map((p) => ({ ...p, head: { ...p.head, sha: testedHead.get(p.number) ?? p.head.sha } }));
        log.info({ ...where, testedSha, landed }, 'the run had landed already (an earlier attempt): not landing it again');
        if (closesPullRequests) await closeLanded(client, repo, stillOpen, landed, request, log, 'landed_before', retryMs);
        return { ok: true, newBaseSha: landed };
      }
      // Nothing landed. A push after the test: landing now would land the old head and leave the PR open.
      return { ok: false, reason: gone ? 'pr_closed' : 'head_changed' };
    }
    prs.push(pr);
  }
  // Moved only from the head the engine expects: GitHub's ref update takes no expected sha, and a fast-forward from
  // anywhere else could bring back what someone took off the branch (found by review: a reset to a head the queue's
  // own landing replaced, which the tested commit still builds on, was undone by the next landing).
  const head = await headBeforeLanding(client, repo, targetBranch, request.expectedBaseSha, retryMs);
  if (head !== request.expectedBaseSha) {
    const landed = await landedAlready(client, request, testedSha, retryMs, head);
    if (landed) {
      log.info({ ...where, testedSha, landed }, 'the run had landed already (an earlier attempt): not landing it again');
      if (closesPullRequests) await closeLanded(client, repo, prs, landed, request, log, 'landed_before', retryMs);
      return { ok: true, newBaseSha: landed };
    }
    log.info({ ...where, expected: request.expectedBaseSha, head }, 'the branch is not where the queue expects it: its head is read before anything lands');
    return { ok: false, reason: 'base_moved' };
  }
  const refused = await fastForward(client, repo, targetBranch, testedSha, log, retryMs);
  if (refused === 'not_fast_forward') {
    // The branch moved: outside the queue (rebuild), on top of this very landing, done by an earlier attempt whose
    // answer was lost, or, for a lane of a parallel queue, by another lane's landing.
    const landed = await landedAlready(client, request, testedSha, retryMs);
    if (landed) {
      log.info({ ...where, testedSha, landed }, 'the run had landed already (an earlier attempt): not landing it again');
      if (closesPullRequests) await closeLanded(client, repo, prs, landed, request, log, 'landed_before', retryMs);
      return { ok: true, newBaseSha: landed };
    }
    const moved = await landOnMovedBase(client, request, testedSha, log, retryMs);
    if (typeof moved !== 'string') return moved;
    log.info({ ...where, testedSha, newBaseSha: moved, prs: prs.map((p) => p.number) }, "landed the run's PRs on the branch as the queue found it");
    if (closesPullRequests) await closeLanded(client, repo, prs, moved, request, log, 'landed_now', retryMs);
    await forgetOtherLandingBranches(client, request, log);
    return { ok: true, newBaseSha: moved };
  } else if (refused) {
    log.error({ ...where, testedSha, err: refused.error }, 'GitHub refused to move the branch to the tested commit');
    return { ok: false, reason: 'blocked', message: `GitHub refused to move ${targetBranch} to the tested commit ${testedSha.slice(0, 7)}: ${messageOf(refused.error)}. ${LANDING_HINT}` };
  } else {
    log.info({ ...where, newBaseSha: testedSha, prs: prs.map((p) => p.number) }, 'landed the tested commit');
  }
  // Asked again, it may have landed before: a branch read from a lagging replica still gave the head before it, and
  // moving the branch where it already was went through.
  if (closesPullRequests) await closeLanded(client, repo, prs, testedSha, request, log, 'landed_now', retryMs);
  return { ok: true, newBaseSha: testedSha };
}

/**
 * The branch's head before landing. A head behind the expected one (which the expected head builds on) is read again
 * a moment later before it counts: GitHub's API may answer from a lagging replica right after the queue's own last
 * landing, and believing it would send the run back to testing for nothing; a branch really reset there reads the same.
 */
async function headBeforeLanding(client: GitHubClient, repo: RepoRef, branch: string, expected: string, retryMs: number): Promise<string | null> {
  let head = await readBranch(client, repo, branch);
  for (let attempt = 1; attempt < STALE_READ_ATTEMPTS && head !== null && head !== expected && (await contains(client, repo, expected, head)); attempt++) {
    await sleep(retryMs * attempt);
    head = await readBranch(client, repo, branch);
  }
  return head;
}

/**
 * Where a run's PRs are put together on the branch as it is now, when its tested commit cannot be fast-forwarded to:
 * outside `mq/**` (no CI starts on it), kept until the landing is done, so a landing asked again finds what it built.
 */
function landingBranchName(request: MergeRequest): string {
  return `mq-landing/${request.targetBranch}/${request.runId}`;
}

/**
 * The commit the branch holds for this run: its tested commit, or what an earlier attempt built on a moved base.
 * `head`: the branch's head as just read (else it is read).
 */
async function landedAlready(client: GitHubClient, request: MergeRequest, testedSha: string, retryMs: number, head?: string | null): Promise<string | null> {
  const branchHead = head === undefined ? await readBranch(client, request.repo, request.targetBranch) : head;
  if (await holds(client, request.repo, branchHead, testedSha)) return testedSha;
  let built = await readBranch(client, request.repo, landingBranchName(request));
  // Asked again, the landing branch an earlier attempt created a moment ago may read as absent (a lagging replica):
  // read again before answering that nothing landed (found by review: the run was tested again on its own landing).
  // Not while the branch is still where the engine expects it: nothing landed on it, whatever the landing branch holds.
  const mayHaveLanded = request.askedAgain === true && branchHead !== null && branchHead !== request.expectedBaseSha;
  for (let attempt = 1; built === null && mayHaveLanded && attempt < STALE_READ_ATTEMPTS; attempt++) {
    await sleep(retryMs * attempt);
    built = await readBranch(client, request.repo, landingBranchName(request));
  }
  return built && (await holds(client, request.repo, branchHead, built)) ? built : null;
}

/**
 * A run the engine asks to land on a branch that moved past the base it was tested on: the base another lane of a
 * parallel queue landed on (found by review: only fast-forwards were tried, so such a run was refused, tested again
 * and refused again while the other lanes kept landing). The engine keeps such a run valid when nothing of its own
 * lane changed (run-validity.ts), so its PRs land on the branch as it is, untested again, as the sandbox lands them:
 * only from the head the engine expects. A conflict with what landed meanwhile, or protection that requires checks
 * on every commit it takes, sends them back to be tested (base_moved).
 */
async function landOnMovedBase(client: GitHubClient, request: MergeRequest, testedSha: string, log: GitHubLog, retryMs: number): Promise<string | MergeOutcome> {
  const { repo, targetBranch, runId } = request;
  if ((await readBranch(client, repo, targetBranch)) !== request.expectedBaseSha) return { ok: false, reason: 'base_moved' };
  // A tested commit on top of that head would have been a fast-forward: the refusal raced a move, and it is tested again.
  if (await contains(client, repo, testedSha, request.expectedBaseSha)) return { ok: false, reason: 'base_moved' };
  let built: Awaited<ReturnType<typeof buildTestBranch>>;
  try {
    built = await buildTestBranch(client, repo, landingBranchName(request), {
      queueId: '',
      repo,
      targetBranch,
      runId,
      baseSha: request.expectedBaseSha,
      heads: request.heads,
      mergeMethod: request.mergeMethod,
    });
  } catch (error) {
    // Only GitHub's refusals (as fastForward reads them); anything else is not a rule to fix (found by review).
    if (isTransientHostError(error) || !failedWith(error, 403, 409, 422)) throw error;
    // GitHub refused to build on the queue's own branches (a rule on mq-staging/*): said as that, not as a refusal of the
    // target branch (found by review: the operator was sent to the target branch's protection).
    return { ok: false, reason: 'blocked', message: `GitHub refused to put the run's PRs together on ${targetBranch} as it is now (built under mq-staging/${targetBranch}): ${messageOf(error)}. Let the App create and force-push the queue's branches (mq/${targetBranch}/*, mq-staging/${targetBranch}, mq-landing/${targetBranch}/*; rulesets and protection on them must allow it).` };
  }
  if (!built.ok) return { ok: false, reason: 'base_moved' };
  const refused = await fastForward(client, repo, targetBranch, built.sha, log, retryMs);
  if (refused && refused !== 'not_fast_forward') {
    // Protection that requires checks on what lands takes no untested commit (unless the App may bypass it): the
    // run is tested again on the branch as it is, whose tested commit then lands like any other (or is refused for
    // good there, which blocks the queue with GitHub's words).
    log.info({ repo: `${repo.owner}/${repo.name}`, branch: targetBranch, runId, err: refused.error }, "GitHub would not take the run's PRs untested on the moved branch: tested again");
  }
  // Refused for the checks it lacks ("Required status check "ci" is expected", "2 of 2 required status checks are
  // expected"): the branch takes only tested commits, and the engine then rebuilds other lanes' runs as soon as a lane
  // lands (onlyTested). Any other refusal (a moment's "Reference update failed") teaches nothing.
  if (refused && refused !== 'not_fast_forward' && /required status check/i.test(messageOf(refused.error))) return { ok: false, reason: 'base_moved', onlyTested: true };
  return refused ? { ok: false, reason: 'base_moved' } : built.sha;
}

/**
 * Deletes the landing branches of the queue's earlier runs (best effort). This run's stays: a landing asked again (an
 * answer lost after the PRs were closed) finds by it that it happened. So at most one is left per target branch.
 */
async function forgetOtherLandingBranches(client: GitHubClient, request: MergeRequest, log: GitHubLog): Promise<void> {
  const { repo, targetBranch } = request;
  const mine = `refs/heads/${landingBranchName(request)}`;
  await afterLanding(log, { repo: `${repo.owner}/${repo.name}`, branch: targetBranch }, 'could not delete the landing branches of earlier runs', async () => {
    const refs = await getData<Array<{ ref: string }>>(client, 'GET /repos/{owner}/{repo}/git/matching-refs/{ref}', { ...repoParams(repo), ref: `heads/mq-landing/${targetBranch}/` });
    for (const { ref } of refs) if (ref !== mine) await deleteTestBranch(client, repo, ref.replace(/^refs\/heads\//, ''));
  });
}

/**
 * Moves the branch to the tested commit, only forward. Null when it moved (or was
 * there already); `not_fast_forward` when the branch has commits the tested one
 * lacks; else GitHub's refusal. Transient failures (no answer, 5xx, rate limits,
 * secondary ones included) are thrown: the runner retries them as an outage.
 */
async function fastForward(
  client: GitHubClient,
  repo: RepoRef,
  branch: string,
  testedSha: string,
  log: GitHubLog,
  retryMs: number,
): Promise<null | 'not_fast_forward' | { error: unknown }> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { ...repoParams(repo), ref: `heads/${branch}`, sha: testedSha, force: false });
      return null;
    } catch (error) {
      if (isTransientHostError(error)) throw error;
      if (failedWith(error, 422) && /fast.?forward/i.test(messageOf(error))) return 'not_fast_forward';
      if (!failedWith(error, 403, 404, 409, 422)) throw error;
      if (attempt < REF_UPDATE_ATTEMPTS && failedWith(error, 422) && /reference update failed/i.test(messageOf(error))) {
        log.warn({ repo: `${repo.owner}/${repo.name}`, branch, testedSha, attempt, err: error }, 'GitHub could not update the branch this time; asking again');
        await sleep(retryMs * attempt);
        continue;
      }
      return { error };
    }
  }
}

/**
 * Whether a branch whose head is `head` (null: no such branch) holds commit `sha`: at it, or under commits pushed
 * since. GitHub's compare of sha...head says `identical` or `ahead` then (`behind` or `diverged`: it does not hold it).
 */
async function holds(client: GitHubClient, repo: RepoRef, head: string | null, sha: string): Promise<boolean> {
  if (head === null) return false;
  return head === sha || (await contains(client, repo, head, sha));
}

/** Whether commit `sha` has `ancestor` in its history (or is it). */
async function contains(client: GitHubClient, repo: RepoRef, sha: string, ancestor: string): Promise<boolean> {
  try {
    // Shas on both sides (a branch name may hold a slash); per_page 1 keeps the answer small.
    const compared = await getData<{ status: string }>(client, 'GET /repos/{owner}/{repo}/compare/{basehead}', { ...repoParams(repo), basehead: `${ancestor}...${sha}`, per_page: 1 });
    return compared.status === 'ahead' || compared.status === 'identical';
  } catch (error) {
    // No common history, or a commit is gone: not contained.
    if (failedWith(error, 404)) return false;
    throw error;
  }
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

/**
 * Squashed or replayed PRs are not their heads: GitHub leaves them open, so the queue
 * closes them and says where they went. After the landing, so best effort: a refusal
 * is logged and the PRs stay landed; a transient failure is thrown (see landTestedCommit).
 * `when`: the run was found landed by an earlier attempt ('landed_before'), or this attempt
 * landed it ('landed_now', which may be a landing asked again, request.askedAgain, whose
 * earlier attempt's answer was lost). Either way an earlier attempt may have commented
 * before it failed (a close that failed transiently): its comment, found by the run's
 * marker on a comment of a bot (a person pasting the marker does not silence it), is
 * not posted twice. A first attempt does not look, as nothing can be there yet.
 */
async function closeLanded(client: GitHubClient, repo: RepoRef, prs: PullRequestJson[], landedSha: string, request: MergeRequest, log: GitHubLog, when: 'landed_before' | 'landed_now', retryMs: number): Promise<void> {
  const again = when === 'landed_before' || request.askedAgain === true;
  // One marker per text: a retry that finds the PR pushed to since the first attempt said "the queue closes it" still
  // says it stays open.
  const closedMarker = `<!-- merge-queue: landed run ${request.runId} -->`;
  const openMarker = `<!-- merge-queue: landed run ${request.runId}, left open -->`;
  for (const pr of prs) {
    const how = request.mergeMethod === 'squash' ? 'squashed' : 'rebased';
    const where = { repo: `${repo.owner}/${repo.name}`, branch: request.targetBranch, runId: request.runId, pr: pr.number, landedSha };
    const said = () => commentedAlready(client, repo, pr.number, { closedMarker, openMarker }, request.runStartedAt, log, where);
    const commented = again ? await said() : [];
    // Asked again after a 5xx only once the comments say the failed attempt did not post it (makeOnce).
    const comment = (kind: 'closed' | 'open', body: string) =>
      afterLanding(log, where, 'could not comment on a landed pull request', () =>
        makeOnce(
          async () => {
            await client.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', { ...repoParams(repo), ...NOT_REPEATED_BLIND, issue_number: pr.number, body });
            return true;
          },
          async () => ((await said()).includes(kind) ? true : null),
          retryMs,
        ),
      );
    // Read again just before closing: a push while the branch moved put commits on the PR that did not land (found
    // by review: such a PR was closed as landed). It stays open and says which head landed; its new commits are the
    // author's to queue again. So does one moved to another branch meanwhile: closing it would end its life there.
    const now = await afterLandingRead(client, repo, pr.number, log, where);
    if (now?.head !== pr.head.sha || now.base !== request.targetBranch) {
      if (commented.includes('open')) continue;
      const why = !now
        ? 'Its head could not be read again, so'
        : now.head !== pr.head.sha
          ? `Commits pushed since (the head is now ${now.head.slice(0, 7)}) did not land, so`
          : `It targets \`${now.base}\` now, so`;
      await comment('open', `Landed on \`${request.targetBranch}\` by the merge queue, ${how}, in ${landedSha}: the head it tested, ${pr.head.sha.slice(0, 7)}. ${why} the pull request stays open.\n\n${openMarker}`);
      continue;
    }
    if (!commented.includes('closed')) {
      await comment('closed', `Landed on \`${request.targetBranch}\` by the merge queue, ${how}, in ${landedSha}. GitHub marks a pull request merged only when its own commits land, so the queue closes it.\n\n${closedMarker}`);
    }
    await afterLanding(log, where, 'could not close a landed pull request', () =>
      client.request('PATCH /repos/{owner}/{repo}/pulls/{pull_number}', { ...repoParams(repo), pull_number: pr.number, state: 'closed' }),
    );
  }
}

/**
 * Clocks differ: comments GitHub dates up to this long before the run started (by this service's clock) are read
 * too. The comment sought comes after the run's CI, so the margin costs nothing but a few more comments read.
 */
const CLOCK_SKEW_MS = 10 * 60_000;

/**
 * Which of the two texts an earlier attempt posted on the PR, by their markers on a bot's comments; a refusal to list
 * them says none (logged), a transient failure is thrown. Only comments since the run started are listed (GitHub's
 * `since`): a long discussion is not read whole.
 */
async function commentedAlready(
  client: GitHubClient,
  repo: RepoRef,
  number: number,
  markers: { closedMarker: string; openMarker: string },
  runStartedAt: Date | undefined,
  log: GitHubLog,
  details: object,
): Promise<Array<'closed' | 'open'>> {
  const since = runStartedAt && Number.isFinite(runStartedAt.getTime()) ? { since: sinceParameter(new Date(runStartedAt.getTime() - CLOCK_SKEW_MS)) } : {};
  try {
    const comments = await readAllPages(client, 'GET /repos/{owner}/{repo}/issues/{issue_number}/comments', { ...repoParams(repo), issue_number: number, ...since }, (data) => data as Array<{ body?: string; user?: { type?: string } | null }>);
    const ours = comments.filter((c) => c.user?.type === 'Bot').map((c) => c.body ?? '');
    // Before the two markers, the "stays open" text carried the one marker the closing text has now: read as what it says.
    const saidOpen = ours.some((body) => body.includes(markers.openMarker) || (body.includes(markers.closedMarker) && body.includes('stays open')));
    const saidClosed = ours.some((body) => body.includes(markers.closedMarker) && !body.includes('stays open'));
    return [...(saidClosed ? (['closed'] as const) : []), ...(saidOpen ? (['open'] as const) : [])];
  } catch (error) {
    if (isTransientHostError(error)) throw error;
    log.warn({ ...details, err: error }, "could not read a landed pull request's comments");
    return [];
  }
}

/** The PR's head and base now, or null when GitHub refused to say (logged); a transient failure is thrown (see landTestedCommit). */
async function afterLandingRead(client: GitHubClient, repo: RepoRef, number: number, log: GitHubLog, details: object): Promise<{ head: string; base: string } | null> {
  try {
    const pr = await getData<PullRequestData>(client, 'GET /repos/{owner}/{repo}/pulls/{pull_number}', { ...repoParams(repo), pull_number: number });
    return { head: pr.head.sha, base: pr.base.ref };
  } catch (error) {
    if (isTransientHostError(error)) throw error;
    log.warn({ ...details, err: error }, 'could not read a landed pull request again');
    return null;
  }
}

/** A step after the landing: GitHub's refusal is logged (what landed stays landed); a transient failure is thrown, to be retried. */
async function afterLanding(log: GitHubLog, details: object, message: string, step: () => Promise<unknown>): Promise<void> {
  try {
    await step();
  } catch (error) {
    if (isTransientHostError(error)) throw error;
    log.warn({ ...details, err: error }, message);
  }
}
