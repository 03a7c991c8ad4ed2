import type { FakeState } from './state.js';
import type { Repo, RequiredCheck, Ruleset, Sha } from './model.js';

/**
 * What a branch requires before something lands on it, from classic branch
 * protection and from active rulesets together (GitHub enforces both, and so does
 * the fake when it merges or moves a protected branch).
 */

export interface BranchRequirements {
  checks: RequiredCheck[];
  /** Branch must contain the base head before merging (`strict` / `strict_required_status_checks_policy`). */
  strict: boolean;
  approvals: number;
  allowedMergeMethods?: string[];
  /** Pushes need a pull request (classic protection's reviews, a ruleset's pull_request rule)... */
  pullRequestRequired: boolean;
  /** No merge commits (classic "Require linear history", or a ruleset's required_linear_history rule). */
  linearHistory: boolean;
  /** ...except from these logins. */
  bypassPullRequests: string[];
  sources: Array<'branch_protection' | 'ruleset'>;
}

export type CheckState = 'success' | 'pending' | 'failure' | 'missing';

/** GitHub counts these check run conclusions as passing for required checks. */
const PASSING_CONCLUSIONS = new Set(['success', 'neutral', 'skipped']);

export function rulesetApplies(repo: Repo, ruleset: Ruleset, branch: string): boolean {
  if (ruleset.enforcement !== 'active') return false;
  const matches = (pattern: string) =>
    pattern === '~ALL' ||
    (pattern === '~DEFAULT_BRANCH' && branch === repo.defaultBranch) ||
    globToRegExp(pattern.replace(/^refs\/heads\//, '')).test(branch);
  return ruleset.include.some(matches) && !ruleset.exclude.some(matches);
}

export function requirementsFor(repo: Repo, branch: string): BranchRequirements {
  const out: BranchRequirements = { checks: [], strict: false, approvals: 0, pullRequestRequired: false, linearHistory: false, bypassPullRequests: [], sources: [] };
  const protection = repo.protection.get(branch);
  out.linearHistory = protection?.requiredLinearHistory ?? false;
  if (protection?.requiredApprovingReviewCount !== undefined) {
    out.pullRequestRequired = true;
    out.bypassPullRequests.push(...(protection.bypassPullRequests ?? []));
  }
  if (protection?.requiredStatusChecks) {
    out.checks.push(...protection.requiredStatusChecks.checks);
    out.strict ||= protection.requiredStatusChecks.strict;
    out.sources.push('branch_protection');
  }
  out.approvals = Math.max(out.approvals, protection?.requiredApprovingReviewCount ?? 0);
  for (const ruleset of repo.rulesets) {
    if (!rulesetApplies(repo, ruleset, branch)) continue;
    for (const rule of ruleset.rules) {
      const p = rule.parameters ?? {};
      if (rule.type === 'required_linear_history') out.linearHistory = true;
      if (rule.type === 'required_status_checks') {
        const checks = (p.required_status_checks ?? []) as Array<{ context: string; integration_id?: number }>;
        out.checks.push(...checks.map((c) => ({ context: c.context, appId: c.integration_id ?? null })));
        out.strict ||= p.strict_required_status_checks_policy === true;
        if (!out.sources.includes('ruleset')) out.sources.push('ruleset');
      } else if (rule.type === 'pull_request') {
        out.pullRequestRequired = true;
        out.bypassPullRequests.push(...ruleset.bypassLogins);
        out.approvals = Math.max(out.approvals, Number(p.required_approving_review_count ?? 0));
        if (Array.isArray(p.allowed_merge_methods)) out.allowedMergeMethods = p.allowed_merge_methods as string[];
      }
    }
  }
  return out;
}

/** The state of one required check on a commit: latest check run of that name (from that app, if set), else latest status. */
export function checkState(state: FakeState, repo: Repo, sha: Sha, required: RequiredCheck): CheckState {
  const runs = state
    .checkRunsOn(repo, sha)
    .filter((r) => r.name === required.context && (required.appId == null || r.appId === required.appId));
  const run = runs.at(-1);
  if (run) {
    if (run.status !== 'completed') return 'pending';
    return PASSING_CONCLUSIONS.has(run.conclusion ?? '') ? 'success' : 'failure';
  }
  // Bound to an App: its statuses count too, by the App's bot (GitHub's "expected source"; found by review).
  const bot = required.appId == null ? null : ([...state.apps.values()].find((app) => app.id === required.appId)?.botLogin ?? '');
  const status = state
    .statusesOn(repo, sha)
    .filter((s) => s.context === required.context && (bot === null || s.creator === bot))
    .at(-1);
  if (!status) return 'missing';
  if (status.state === 'success') return 'success';
  return status.state === 'pending' ? 'pending' : 'failure';
}

/** Why these requirements refuse `sha` (GitHub's wording where known), or null. */
export function unmetChecks(state: FakeState, repo: Repo, sha: Sha, requirements: BranchRequirements): string | null {
  for (const required of requirements.checks) {
    const s = checkState(state, repo, sha, required);
    if (s === 'missing' || s === 'pending') return `Required status check "${required.context}" is expected.`;
    if (s === 'failure') return `Required status check "${required.context}" is failing.`;
  }
  return null;
}

/** fnmatch as GitHub rulesets use it: `*` within a path segment, `**` across. */
function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      out += '.*';
      i++;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^$()|[\]\\{}]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}
