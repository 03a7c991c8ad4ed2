import type { RepoRef } from '../../domain/repo.js';
import { failedWith, getData, readAllPages, repoParams, type GitHubClient } from './github-client.js';
import type { BranchRuleData, RequiredStatusChecksData } from './github-types.js';
import { checkRunName } from './feedback-texts.js';

/** The checks that decide a test run, and where the list came from. */
export interface RequiredStatuses {
  statuses: string[];
  source: 'queue' | 'branch_protection' | 'ruleset';
}

/** Why a run cannot start when nothing names a required check. */
export function noRequiredStatusesMessage(branch: string): string {
  return `No required status checks are configured for ${branch} (branch protection, rulesets or the queue's requiredStatuses); the queue never merges untested code.`;
}

/**
 * The queue's own list wins (an empty one says nothing, so it does not count);
 * otherwise the union of what classic branch protection and rulesets require,
 * since GitHub enforces both. Checks are matched by name: a check bound to one
 * app (`app_id`) is still matched by its name, as the queue reads it by name.
 * Null: nothing is required anywhere, and the caller refuses to test.
 */
export async function resolveRequiredStatuses(
  client: GitHubClient,
  repo: RepoRef,
  branch: string,
  queueStatuses: string[] | undefined,
): Promise<RequiredStatuses | null> {
  if (queueStatuses && queueStatuses.length > 0) return { statuses: unique(queueStatuses), source: 'queue' };
  // Protection may require the queue's own check (so nobody merges around the queue). It is shown on PR
  // heads, never on test branches, so a run must not wait for it.
  const notOwn = (name: string) => name !== checkRunName(branch);
  const protection = (await fromBranchProtection(client, repo, branch)).filter(notOwn);
  const rulesets = (await fromRulesets(client, repo, branch)).filter(notOwn);
  const statuses = unique([...protection, ...rulesets]);
  if (statuses.length === 0) return null;
  // One source is recorded; classic protection is named when it contributes, being the older and more common.
  return { statuses, source: protection.length > 0 ? 'branch_protection' : 'ruleset' };
}

async function fromBranchProtection(client: GitHubClient, repo: RepoRef, branch: string): Promise<string[]> {
  try {
    const data = await getData<RequiredStatusChecksData>(client, 'GET /repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks', {
      ...repoParams(repo),
      branch,
    });
    return [...(data.contexts ?? []), ...(data.checks ?? []).map((check) => check.context)];
  } catch (error) {
    // 404: the branch is not protected, or its protection requires no checks.
    if (failedWith(error, 404)) return [];
    throw error;
  }
}

async function fromRulesets(client: GitHubClient, repo: RepoRef, branch: string): Promise<string[]> {
  try {
    const rules = await readAllPages(client, 'GET /repos/{owner}/{repo}/rules/branches/{branch}', { ...repoParams(repo), branch }, (data) => data as BranchRuleData[]);
    return rules.flatMap((rule) => (rule.type === 'required_status_checks' ? (rule.parameters?.required_status_checks ?? []).map((check) => check.context) : []));
  } catch (error) {
    if (failedWith(error, 404)) return [];
    throw error;
  }
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}
