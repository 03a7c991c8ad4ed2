import type { RequiredCheckApp } from '../../domain/records.js';
import type { BranchPolicy } from './branch-policy.js';
import { requiredCheckNames, requiredCheckApps } from './branch-policy.js';
import { checkRunName } from './feedback-texts.js';

/** The checks that decide a test run, and where the list came from. */
export interface RequiredStatuses {
  statuses: string[];
  source: 'queue' | 'branch_protection' | 'ruleset';
  /** The required checks the policy binds to one App (requiredCheckApps); none for the queue's own list. */
  apps: RequiredCheckApp[];
}

/** Why a run cannot start when nothing names a required check. */
export function noRequiredStatusesMessage(branch: string): string {
  return `No required status checks are configured for ${branch} (branch protection, rulesets or the queue's requiredStatuses); the queue never merges untested code. Name the checks CI reports, then update the queue to resume.`;
}

/**
 * The queue's own list wins (an empty one says nothing, so it does not count);
 * otherwise the union of what classic branch protection and rulesets require,
 * since GitHub enforces both. Checks are matched by name, and a check the
 * policy binds to one App (`apps`) by its App too (commit-checks.ts).
 * Null: nothing is required anywhere, and the caller refuses to test.
 */
export function resolveRequiredStatuses(branch: string, queueStatuses: string[] | undefined, policy: BranchPolicy | null): RequiredStatuses | null {
  // Protection may require the queue's own check; it is shown on PR heads, never on test branches,
  // so a run must not wait for it (landing-refusal says what that requirement does to landing).
  const notOwn = (name: string) => name !== checkRunName(branch);
  if (queueStatuses && queueStatuses.length > 0) {
    const statuses = unique(queueStatuses);
    // The queue's list names checks; the policy still binds those it requires to their Apps (found by review: naming
    // a pinned check in the queue's list took its pin off).
    return { statuses, source: 'queue', apps: policy ? requiredCheckApps(policy).filter((check) => statuses.includes(check.name)) : [] };
  }
  if (!policy) return null;
  const names = requiredCheckNames(policy);
  const protection = names.protection.filter(notOwn);
  const rulesets = names.rulesets.filter(notOwn);
  const statuses = unique([...protection, ...rulesets]);
  if (statuses.length === 0) return null;
  // One source is recorded; classic protection is named when it contributes, being the older and more common.
  return { statuses, source: protection.length > 0 ? 'branch_protection' : 'ruleset', apps: requiredCheckApps(policy).filter((check) => notOwn(check.name)) };
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}
