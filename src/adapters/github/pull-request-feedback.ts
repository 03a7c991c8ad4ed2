import type { RepoRef } from '../../domain/repo.js';
import type { PullRequestStatusUpdate } from '../../ports/git-host.js';
import { getData, makeOnce, makeOnceLookingFirst, NOT_REPEATED_BLIND, readAllPages, repoParams, type GitHubClient } from './github-client.js';
import type { CheckRunListData, IssueCommentData } from './github-types.js';
import { checkRunExternalId, checkRunName, checkRunView, commentMarker, ejectionComment, type FeedbackContext } from './feedback-texts.js';

/**
 * The check run this process last wrote for a PR head, so the next update
 * goes straight to it instead of listing the head's check runs first (one
 * request per update saved). Bounded; a miss (a restart, another replica)
 * costs the lookup, never a duplicate.
 */
export class CheckRunIds {
  private readonly ids = new Map<string, { id: number; completed: boolean }>();
  constructor(private readonly limit = 10_000) {}

  get(key: string): { id: number; completed: boolean } | undefined {
    return this.ids.get(key);
  }

  set(key: string, value: { id: number; completed: boolean }): void {
    this.ids.delete(key);
    this.ids.set(key, value);
    if (this.ids.size > this.limit) this.ids.delete(this.ids.keys().next().value as string);
  }
}

/**
 * Shows the PR's queue state as ONE check run on its head: found again by
 * name and external id and updated, so repeated reports never stack up runs.
 */
export async function publishCheckRun(client: GitHubClient, update: PullRequestStatusUpdate, context: FeedbackContext, now: Date, known?: CheckRunIds): Promise<void> {
  const name = checkRunName(update.targetBranch);
  const externalId = checkRunExternalId(update.targetBranch, update.prNumber);
  const view = checkRunView(update, context);
  const body = {
    name,
    external_id: externalId,
    status: view.status,
    ...(view.conclusion ? { conclusion: view.conclusion, completed_at: now.toISOString() } : {}),
    output: { title: view.title, summary: view.summary },
  };
  const key = `${update.repo.owner}/${update.repo.name}:${update.headSha}:${externalId}`;
  const remembered = known?.get(key);
  if (remembered && (!remembered.completed || view.status === 'completed')) {
    await client.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', { ...repoParams(update.repo), check_run_id: remembered.id, ...body });
    known?.set(key, { id: remembered.id, completed: view.status === 'completed' });
    return;
  }
  const listing = { ...repoParams(update.repo), ref: update.headSha, check_name: name, filter: 'latest', per_page: 100 };
  const listed = await getData<CheckRunListData>(client, 'GET /repos/{owner}/{repo}/commits/{ref}/check-runs', listing);
  const existing = latestOf(listed.check_runs, externalId);
  // A completed check run cannot be reopened: a PR queued again on the same head gets a new one, which GitHub then shows.
  const reusable = existing && (existing.status !== 'completed' || view.status === 'completed') ? existing : undefined;
  let id: number;
  if (reusable) {
    await client.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', { ...repoParams(update.repo), check_run_id: reusable.id, ...body });
    id = reusable.id;
  } else {
    id = await makeOnce(
      async () => (await getData<{ id: number }>(client, 'POST /repos/{owner}/{repo}/check-runs', { ...repoParams(update.repo), ...NOT_REPEATED_BLIND, head_sha: update.headSha, ...body })).id,
      // Made before its answer was lost: one of ours newer than the one listed before (a completed one, kept).
      async () => {
        const made = latestOf((await getData<CheckRunListData>(client, 'GET /repos/{owner}/{repo}/commits/{ref}/check-runs', listing)).check_runs, externalId);
        return made && made.id > (existing?.id ?? 0) ? made.id : null;
      },
    );
  }
  known?.set(key, { id, completed: view.status === 'completed' });
}

/** Comments once on an ejection: a comment carrying this event's marker means it was already said. */
export async function postEjectionComment(client: GitHubClient, update: PullRequestStatusUpdate, context: FeedbackContext): Promise<void> {
  const marker = commentMarker(update);
  const said = async () => ((await hasComment(client, update.repo, update.prNumber, marker)) ? true : null);
  await makeOnceLookingFirst(async () => {
    await client.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...repoParams(update.repo),
      ...NOT_REPEATED_BLIND,
      issue_number: update.prNumber,
      body: ejectionComment(update, context),
    });
    return true;
  }, said);
}

/** The newest of the queue's check runs for this PR (a completed one cannot be reopened: a new one may follow it). */
function latestOf<R extends { id: number; external_id?: string | null }>(runs: R[], externalId: string): R | undefined {
  return runs.filter((run) => run.external_id === externalId).reduce<R | undefined>((latest, run) => (!latest || run.id > latest.id ? run : latest), undefined);
}

async function hasComment(client: GitHubClient, repo: RepoRef, prNumber: number, marker: string): Promise<boolean> {
  const comments = await readAllPages(client, 'GET /repos/{owner}/{repo}/issues/{issue_number}/comments', { ...repoParams(repo), issue_number: prNumber }, (data) => data as IssueCommentData[]);
  return comments.some((comment) => comment.body?.includes(marker));
}
