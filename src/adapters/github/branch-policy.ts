import type { RequiredCheckApp } from '../../domain/records.js';
import type { MergeMethod } from '../../domain/queue-config.js';
import type { RepoRef } from '../../domain/repo.js';
import { checkRunName } from './feedback-texts.js';
import { failedWith, getData, messageOf, readAllPages, repoParams, type GitHubClient, type GitHubLog } from './github-client.js';
import type { BranchProtectionData, BranchRuleData, RepositoryData, RulesetData } from './github-types.js';

/** What the target branch's protection and rulesets say (kept a while: see LandingPolicies). */
export interface BranchPolicy {
  /** Classic branch protection, or null when the branch has none. */
  protection: BranchProtectionData | null;
  /** Every active ruleset rule on the branch. */
  rules: BranchRuleData[];
}

/**
 * Classic protection (404: none) and the branch's rules (rulesets), as GitHub reports them.
 * A private repository on GitHub Free has neither, and reading them answers 403 (see
 * `NOT_ON_PLAN`): read as none, with a warning.
 */
export async function readBranchPolicy(client: GitHubClient, repo: RepoRef, branch: string, log?: GitHubLog): Promise<BranchPolicy> {
  let protection: BranchProtectionData | null = null;
  try {
    protection = await getData<BranchProtectionData>(client, 'GET /repos/{owner}/{repo}/branches/{branch}/protection', { ...repoParams(repo), branch });
  } catch (error) {
    if (!noneToRead(error, repo, branch, 'branch protection', log)) throw error;
  }
  let rules: BranchRuleData[] = [];
  try {
    rules = await readAllPages(client, 'GET /repos/{owner}/{repo}/rules/branches/{branch}', { ...repoParams(repo), branch }, (data) => data as BranchRuleData[]);
  } catch (error) {
    if (!noneToRead(error, repo, branch, 'rulesets', log)) throw error;
  }
  return { protection, rules };
}

/** GitHub's refusal to read protection or rules of a private repository whose owner is on GitHub Free. */
const NOT_ON_PLAN = /upgrade to github pro or make this repository public/i;

/** Whether a failed read means "nothing there": 404, or the plan has no such feature (403, logged). */
function noneToRead(error: unknown, repo: RepoRef, branch: string, what: string, log: GitHubLog | undefined): boolean {
  if (failedWith(error, 404)) return true;
  if (!failedWith(error, 403) || !NOT_ON_PLAN.test(messageOf(error))) return false;
  log?.warn(
    { repo: `${repo.owner}/${repo.name}`, branch, err: error },
    `GitHub's plan for this private repository has no ${what} (${messageOf(error)}): read as none, so the queue's requiredStatuses must name the checks that decide a run`,
  );
  return true;
}

/** The checks protection requires, and those rulesets require, by name. */
export function requiredCheckNames(policy: BranchPolicy): { protection: string[]; rulesets: string[] } {
  const checks = policy.protection?.required_status_checks;
  return {
    protection: [...(checks?.contexts ?? []), ...(checks?.checks ?? []).map((check) => check.context)],
    rulesets: policy.rules.flatMap((rule) => (rule.type === 'required_status_checks' ? (rule.parameters?.required_status_checks ?? []).map((check) => check.context) : [])),
  };
}

/**
 * The required checks bound to one App: classic protection's `checks[].app_id` (-1 or absent: any source) and a
 * ruleset's `integration_id`. GitHub takes a result by that name from that App only; the queue must too, or anyone
 * who may post a status or check run under the name (a workflow the PR itself brings, another App) passes the run.
 */
export function requiredCheckApps(policy: BranchPolicy): RequiredCheckApp[] {
  const checks = policy.protection?.required_status_checks?.checks ?? [];
  const fromProtection = checks.flatMap((check) => (typeof check.app_id === 'number' && check.app_id > 0 ? [{ name: check.context, appId: check.app_id }] : []));
  const fromRulesets = policy.rules.flatMap((rule) =>
    rule.type === 'required_status_checks' ? (rule.parameters?.required_status_checks ?? []).flatMap((check) => (typeof check.integration_id === 'number' && check.integration_id > 0 ? [{ name: check.context, appId: check.integration_id }] : [])) : [],
  );
  return [...fromProtection, ...fromRulesets];
}

/** The reads a landing's prediction needs besides the branch's policy (kept a while: see LandingPolicies). */
export interface PolicyReads {
  /** The repository, for its merge settings. */
  repository(): Promise<RepositoryData>;
  /** A ruleset, for whether the App may bypass it. */
  ruleset(id: number): Promise<RulesetData>;
}

/** GitHub's repository setting for each of the queue's methods. */
const METHOD_SETTING = { merge_commit: 'allow_merge_commit', squash: 'allow_squash_merge', rebase: 'allow_rebase_merge' } as const;
/** GitHub's name for each method in rulesets' `allowed_merge_methods`. */
const RULESET_METHOD = { merge_commit: 'merge', squash: 'squash', rebase: 'rebase' } as const;

/**
 * Why GitHub will refuse to let the App land on this branch with this method,
 * known before any CI is spent; null when nothing predicts a refusal. The
 * queue lands by moving the branch to the tested commit (see land-tested-commit),
 * so what matters is who may push, what history is allowed, and which checks
 * the landed commit must carry. `appSlug` null: the App's own name is unknown,
 * and bypass lists cannot be judged (not predicted).
 */
export async function landingRefusal(
  reads: PolicyReads,
  branch: string,
  method: MergeMethod,
  policy: BranchPolicy,
  appSlug: string | null,
): Promise<string | null> {
  const { protection, rules } = policy;
  const settings = await reads.repository();
  if (settings[METHOD_SETTING[method]] === false) {
    return `The repository does not allow ${method.replace('_', ' ')} merges (its settings), so the queue will not land with it: set the queue's mergeMethod to one the repository allows.`;
  }
  const linear = protection?.required_linear_history?.enabled === true || rules.some((rule) => rule.type === 'required_linear_history');
  if (linear && method === 'merge_commit') {
    return `\`${branch}\` requires a linear history, which merge commits break: set the queue's mergeMethod to squash or rebase.`;
  }
  for (const rule of rules) {
    if (rule.type !== 'pull_request') continue;
    const allowed = (rule.parameters as { allowed_merge_methods?: string[] } | undefined)?.allowed_merge_methods;
    if (allowed && !allowed.includes(RULESET_METHOD[method])) {
      return `A ruleset on \`${branch}\` allows only ${allowed.join(', ')} merges: set the queue's mergeMethod to one of them.`;
    }
  }
  const own = checkRunName(branch);
  const { protection: protectionChecks, rulesets: rulesetChecks } = requiredCheckNames(policy);
  if ([...protectionChecks, ...rulesetChecks].includes(own)) {
    return `\`${branch}\` requires the queue's own check "${own}", which is shown on pull requests, never on the commit that lands: remove it from the required checks.`;
  }
  if (appSlug === null) return null;
  const reviews = protection?.required_pull_request_reviews;
  if (reviews && !(reviews.bypass_pull_request_allowances?.apps ?? []).some((app) => app?.slug === appSlug)) {
    return `\`${branch}\` requires a pull request before merging, and the App "${appSlug}" may not bypass it: add it to "Allow specified actors to bypass required pull requests" in the branch protection.`;
  }
  const restrictions = protection?.restrictions;
  if (restrictions && !(restrictions.apps ?? []).some((app) => app?.slug === appSlug)) {
    return `Only listed people, teams and apps may push to \`${branch}\`, and the App "${appSlug}" is not listed: add it to "Restrict who can push to matching branches".`;
  }
  for (const id of new Set(rules.filter((rule) => rule.type === 'pull_request' || rule.type === 'update').flatMap((rule) => (rule.ruleset_id === undefined ? [] : [rule.ruleset_id])))) {
    const ruleset = await reads.ruleset(id);
    if (ruleset.current_user_can_bypass !== 'always' && ruleset.current_user_can_bypass !== 'exempt') {
      return `The ruleset "${ruleset.name}" on \`${branch}\` requires a pull request (or restricts updates), and the App "${appSlug}" may not bypass it: add it to the ruleset's bypass list (always).`;
    }
  }
  return null;
}
