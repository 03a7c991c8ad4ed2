import type { RepoRef } from '../../domain/repo.js';
import type { RequiredCheckApp } from '../../domain/records.js';
import { failedWith, getData, readAllPages, repoParams, type GitHubClient } from './github-client.js';
import type { CheckRunListData, CombinedStatusData, CommitStatusData, CommitStatusListData } from './github-types.js';
import { checkRunOutcome, statusOutcome, type CheckRunFact, type CommitStatusFact } from './check-outcome.js';

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
  // A name bound to several Apps (protection binds it to one, a ruleset to another) is decided below, from each App.
  const shared = new Set(apps.map((app) => app.name).filter((name) => appsOf(name).length > 1));
  let runs = listed.filter((run) => !shared.has(run.name));
  // A shared name counts as named once each of its Apps has a check run of it (no status then needed; found by review).
  const hasRunFrom = (name: string, appId: number) => listed.some((run) => run.name === name && run.app?.id === appId);
  const named = new Set([...runs.map((run) => run.name), ...[...shared].filter((name) => appsOf(name).every((appId) => hasRunFrom(name, appId)))]);
  let statuses: Status[] =
    required && required.every((name) => named.has(name))
      ? []
      : // The combined status already keeps only the latest status per context.
        await readAllPages(client, 'GET /repos/{owner}/{repo}/commits/{ref}/status', { ...repoParams(repo), ref: sha }, (data) => (data as CombinedStatusData).statuses);
  // The Apps whose status of a name is looked for: of a shared name, only those without a check run of it.
  const statusApps = (name: string) => (shared.has(name) ? appsOf(name).filter((appId) => !hasRunFrom(name, appId)) : appsOf(name));
  const byApp = statuses.some((status) => statusApps(status.context).length > 0) ? await statusesByApp(client, repo, sha, statuses, statusApps) : new Map<string, Status>();
  // A name bound to one App: that App's latest status of it, or none.
  statuses = statuses.flatMap((status) => {
    const bound = appsOf(status.context);
    if (bound.length === 0) return [status];
    if (bound.length > 1) return [];
    return byApp.get(appKey(status.context, bound[0] as number)) ?? [];
  });
  for (const name of shared) {
    const decided = fromEachApp(name, appsOf(name), listed, byApp);
    if (decided?.run) runs = [...runs, decided.run];
    if (decided?.status) statuses = [...statuses, decided.status];
  }
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
 * A name bound to several Apps: GitHub wants it from each (found by review: either App's result passed the run). Each
 * App's result is its latest check run of the name, else its status of it (one App may report a check run, another a
 * status). One result says the whole: a failure of any App, else, once every App succeeded, one of theirs, else a
 * pending one or none (the run waits).
 */
function fromEachApp(name: string, appIds: number[], runs: ListedRun[], byApp: Map<string, Status>): { run?: ListedRun; status?: Status } | null {
  const results = appIds.map((appId) => {
    const run = runs.filter((r) => r.name === name && r.app?.id === appId).sort((a, b) => b.id - a.id)[0];
    if (run) return { run, outcome: checkRunOutcome({ id: run.id, name, status: run.status, conclusion: run.conclusion }) };
    const status = byApp.get(appKey(name, appId));
    if (status) return { status, outcome: statusOutcome({ context: name, state: status.state }) };
    return null;
  });
  const failed = results.find((result) => result?.outcome === 'failure');
  if (failed) return failed;
  if (results.every((result) => result?.outcome === 'success')) return results[0] ?? null;
  const pending = results.find((result) => result?.outcome === 'pending');
  if (!pending) return null;
  // A success among pending ones must not pass the name: shown as pending.
  return pending.run ? { run: pending.run } : { status: { ...(pending.status as Status), state: 'pending' } };
}

const appKey = (context: string, appId: number) => `${appId}:${context}`;

/**
 * The latest status of each bound name by each of its Apps (keyed by appKey). The combined status does not say who
 * created a status; the commit's list does, newest first: read page by page until each bound name has each App's
 * status, or the list ends.
 */
async function statusesByApp(client: GitHubClient, repo: RepoRef, sha: string, combined: Status[], appsOf: (name: string) => number[]): Promise<Map<string, Status>> {
  const found = new Map<string, Status>();
  const sought = new Set(combined.map((status) => status.context).filter((name) => appsOf(name).length > 0));
  const wanted = [...sought].reduce((sum, name) => sum + appsOf(name).length, 0);
  for (let page = 1; wanted > found.size; page++) {
    const listed = (await client.request('GET /repos/{owner}/{repo}/commits/{ref}/statuses', { ...repoParams(repo), ref: sha, per_page: 100, page })).data as CommitStatusListData;
    for (const candidate of listed) {
      if (!sought.has(candidate.context)) continue;
      const appId = await appOfBot(client, candidate.creator);
      if (appId !== null && appsOf(candidate.context).includes(appId) && !found.has(appKey(candidate.context, appId))) found.set(appKey(candidate.context, appId), candidate);
    }
    if (listed.length < 100) break;
  }
  return found;
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
