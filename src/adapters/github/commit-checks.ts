import type { RepoRef } from '../../domain/repo.js';
import type { RequiredCheckApp } from '../../domain/records.js';
import { failedWith, getData, readAllPages, repoParams, type GitHubClient } from './github-client.js';
import type { CheckRunListData, CombinedStatusData, CommitStatusData, CommitStatusListData } from './github-types.js';
import { checkRunOutcome, type CheckRunFact, type CommitStatusFact } from './check-outcome.js';

/**
 * Every check run and commit status on a commit, all pages of both. With
 * `required`, statuses are read only when check runs do not name every
 * required check (a check run of a name wins over a status of it), which saves
 * a request per look for CI that reports check runs.
 * With `apps` (required checks the branch's policy binds to one GitHub App), a
 * result of such a name counts only from that App, as GitHub enforces it: a
 * check run by its `app`, a commit status by the App behind its creator (read
 * from the commit's statuses list, only when such a status is there).
 */
export async function readCommitChecks(
  client: GitHubClient,
  repo: RepoRef,
  sha: string,
  required?: string[],
  apps: RequiredCheckApp[] = [],
): Promise<{ checkRuns: CheckRunFact[]; statuses: CommitStatusFact[] }> {
  const appsOf = (name: string) => [...new Set(apps.filter((app) => app.name === name).map((app) => app.appId))];
  const listed = (await readAllPages(client, 'GET /repos/{owner}/{repo}/commits/{ref}/check-runs', { ...repoParams(repo), ref: sha, filter: 'latest' }, (data) => (data as CheckRunListData).check_runs)).filter((run) => {
    const bound = appsOf(run.name);
    return bound.length === 0 || (run.app?.id !== undefined && bound.includes(run.app.id));
  });
  const runs = fromEachApp(listed, appsOf);
  const named = new Set(runs.map((run) => run.name));
  let statuses: Status[] =
    required && required.every((name) => named.has(name))
      ? []
      : // The combined status already keeps only the latest status per context.
        await readAllPages(client, 'GET /repos/{owner}/{repo}/commits/{ref}/status', { ...repoParams(repo), ref: sha }, (data) => (data as CombinedStatusData).statuses);
  if (statuses.some((status) => appsOf(status.context).length > 0)) statuses = await fromTheirApps(client, repo, sha, statuses, appsOf);
  return {
    checkRuns: runs.map((run) => {
      // GitHub's page of the check: it shows annotations and links on to the CI's own page.
      const url = run.html_url ?? run.details_url;
      return { id: run.id, name: run.name, status: run.status, conclusion: run.conclusion, ...(url ? { url } : {}) };
    }),
    statuses: statuses.map((status) => ({ context: status.context, state: status.state, ...(status.target_url ? { url: status.target_url } : {}) })),
  };
}

type Status = Pick<CommitStatusData, 'context' | 'state' | 'target_url'>;
type ListedRun = CheckRunListData['check_runs'][number];

/**
 * A name bound to several Apps (protection binds it to one, a ruleset to another): GitHub wants it from each (found by
 * review: either App's result passed the run). Such a name keeps one run that says the whole: a failure of any App's
 * latest run, else, once every App's latest run succeeded, the latest of them, else none (the run waits).
 */
function fromEachApp(runs: ListedRun[], appsOf: (name: string) => number[]): ListedRun[] {
  const shared = new Set(runs.map((run) => run.name).filter((name) => appsOf(name).length > 1));
  if (shared.size === 0) return runs;
  const kept = runs.filter((run) => !shared.has(run.name));
  for (const name of shared) {
    const latest = appsOf(name).map((appId) => runs.filter((run) => run.name === name && run.app?.id === appId).sort((a, b) => b.id - a.id)[0]);
    const outcomes = latest.map((run) => (run ? checkRunOutcome({ id: run.id, name, status: run.status, conclusion: run.conclusion }) : 'pending'));
    const failed = latest.find((run, i) => run && outcomes[i] === 'failure');
    if (failed) kept.push(failed);
    else if (outcomes.every((outcome) => outcome === 'success')) kept.push(latest.sort((a, b) => (b?.id ?? 0) - (a?.id ?? 0))[0] as ListedRun);
  }
  return kept;
}

/**
 * The combined statuses with each one of a name bound to an App replaced by the latest status of that name its App
 * created (or left out when it made none). The combined status does not say who created a status; the commit's list
 * does, newest first: read page by page until each bound name has its App's status, or the list ends. A name bound to
 * several Apps needs each one's: a failure of any decides, success needs all, else it is left pending.
 */
async function fromTheirApps(client: GitHubClient, repo: RepoRef, sha: string, combined: Status[], appsOf: (name: string) => number[]): Promise<Status[]> {
  const found = new Map<string, Status>();
  const key = (context: string, appId: number) => `${appId}:${context}`;
  const sought = new Set(combined.map((status) => status.context).filter((name) => appsOf(name).length > 0));
  const wanted = [...sought].reduce((sum, name) => sum + appsOf(name).length, 0);
  for (let page = 1; wanted > found.size; page++) {
    const listed = (await client.request('GET /repos/{owner}/{repo}/commits/{ref}/statuses', { ...repoParams(repo), ref: sha, per_page: 100, page })).data as CommitStatusListData;
    for (const candidate of listed) {
      if (!sought.has(candidate.context)) continue;
      const appId = await appOfBot(client, candidate.creator);
      if (appId !== null && appsOf(candidate.context).includes(appId) && !found.has(key(candidate.context, appId))) found.set(key(candidate.context, appId), candidate);
    }
    if (listed.length < 100) break;
  }
  return combined.flatMap((status) => {
    if (!sought.has(status.context)) return [status];
    const each = appsOf(status.context).map((appId) => found.get(key(status.context, appId)));
    const failed = each.find((s) => s && (s.state === 'failure' || s.state === 'error'));
    if (failed) return [failed];
    if (each.every((s) => s?.state === 'success')) return [each[0] as Status];
    const some = each.find((s) => s !== undefined);
    return some ? [{ ...some, state: 'pending' }] : [];
  });
}

/** App ids by slug: an App's id never changes. */
const appIds = new Map<string, Promise<number | null>>();

/** The App behind a status's creator: an App's statuses are created by its bot, `<slug>[bot]`; null for a person. */
function appOfBot(client: GitHubClient, creator: { login: string; type: string } | null | undefined): Promise<number | null> {
  const slug = creator?.type === 'Bot' && creator.login.endsWith('[bot]') ? creator.login.slice(0, -'[bot]'.length) : null;
  if (slug === null) return Promise.resolve(null);
  let id = appIds.get(slug);
  if (!id) {
    id = getData<{ id: number }>(client, 'GET /apps/{app_slug}', { app_slug: slug }).then(
      (app) => app.id,
      (error: unknown) => {
        // A 404 says no such App (a bot that is none): kept. Anything else is asked again next time.
        if (failedWith(error, 404)) return null;
        appIds.delete(slug);
        throw error;
      },
    );
    appIds.set(slug, id);
  }
  return id;
}
