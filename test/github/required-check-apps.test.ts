/**
 * Which required checks a branch's policy binds to one App (branch-policy.ts requiredCheckApps), and what a run
 * starting under that policy is told (required-statuses.ts resolveRequiredStatuses).
 */
import type { BranchPolicy } from '../../src/adapters/github/branch-policy.js';
import { requiredCheckApps } from '../../src/adapters/github/branch-policy.js';
import { resolveRequiredStatuses } from '../../src/adapters/github/required-statuses.js';

const policy = (checks: Array<{ context: string; app_id: number | null }>, rulesetChecks: Array<{ context: string; integration_id?: number }>): BranchPolicy =>
  ({
    protection: { required_status_checks: { strict: false, contexts: checks.map((c) => c.context), checks } },
    rules: [{ type: 'required_status_checks', parameters: { strict_required_status_checks_policy: false, required_status_checks: rulesetChecks } }],
  }) as unknown as BranchPolicy;

test("protection's app_id (a positive id; null and -1 mean any source) and a ruleset's integration_id bind a check to an App", () => {
  const p = policy(
    [
      { context: 'build', app_id: 15368 },
      { context: 'lint', app_id: null },
      { context: 'docs', app_id: -1 },
    ],
    [{ context: 'e2e', integration_id: 42 }, { context: 'perf' }],
  );
  expect(requiredCheckApps(p)).toEqual([
    { name: 'build', appId: 15368 },
    { name: 'e2e', appId: 42 },
  ]);
  const resolved = resolveRequiredStatuses('main', undefined, p);
  expect(resolved).toMatchObject({ statuses: ['build', 'lint', 'docs', 'e2e', 'perf'], apps: [{ name: 'build', appId: 15368 }, { name: 'e2e', appId: 42 }] });
  // The queue's own list names the checks; the policy still binds those of them it pins (found by review).
  expect(resolveRequiredStatuses('main', ['build', 'lint'], p)).toEqual({ statuses: ['build', 'lint'], source: 'queue', apps: [{ name: 'build', appId: 15368 }] });
  expect(resolveRequiredStatuses('main', ['build'], null)).toEqual({ statuses: ['build'], source: 'queue', apps: [] });
});
