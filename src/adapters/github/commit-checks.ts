import type { RepoRef } from '../../domain/repo.js';
import { readAllPages, repoParams, type GitHubClient } from './github-client.js';
import type { CheckRunListData, CombinedStatusData } from './github-types.js';
import type { CheckRunFact, CommitStatusFact } from './check-outcome.js';

/**
 * Every check run and commit status on a commit, all pages of both. With
 * `required`, statuses are read only when check runs do not name every
 * required check (a check run of a name wins over a status of it), which saves
 * a request per look for CI that reports check runs.
 */
export async function readCommitChecks(client: GitHubClient, repo: RepoRef, sha: string, required?: string[]): Promise<{ checkRuns: CheckRunFact[]; statuses: CommitStatusFact[] }> {
  const runs = await readAllPages(client, 'GET /repos/{owner}/{repo}/commits/{ref}/check-runs', { ...repoParams(repo), ref: sha, filter: 'latest' }, (data) => (data as CheckRunListData).check_runs);
  const named = new Set(runs.map((run) => run.name));
  const statuses =
    required && required.every((name) => named.has(name))
      ? []
      : // The combined status already keeps only the latest status per context.
        await readAllPages(client, 'GET /repos/{owner}/{repo}/commits/{ref}/status', { ...repoParams(repo), ref: sha }, (data) => (data as CombinedStatusData).statuses);
  return {
    checkRuns: runs.map((run) => {
      // GitHub's page of the check: it shows annotations and links on to the CI's own page.
      const url = run.html_url ?? run.details_url;
      return { id: run.id, name: run.name, status: run.status, conclusion: run.conclusion, ...(url ? { url } : {}) };
    }),
    statuses: statuses.map((status) => ({ context: status.context, state: status.state, ...(status.target_url ? { url: status.target_url } : {}) })),
  };
}
