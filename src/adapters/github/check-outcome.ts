import type { CheckResult } from '../../ports/git-host.js';

/** A check run on a commit, reduced to what decides a run. */
export interface CheckRunFact {
  id: number;
  name: string;
  /** queued, in_progress, completed, waiting, requested, pending. */
  status: string;
  conclusion: string | null;
  url?: string;
}

/** A commit status (the older Statuses API), by context. */
export interface CommitStatusFact {
  context: string;
  /** success, failure, error, pending. */
  state: string;
  url?: string;
}

export type ChecksVerdict =
  | { verdict: 'passed'; checkRuns: CheckResult[] }
  | { verdict: 'failed'; checkRuns: CheckResult[]; failedChecks: string[] }
  | { verdict: 'waiting'; missing: string[] };

type Outcome = 'success' | 'failure' | 'pending';

/**
 * Like GitHub's branch protection: `skipped` and `neutral` satisfy a required
 * check; anything else that completed without success fails it (`stale` is
 * GitHub giving up on a run that never finished).
 */
export function checkRunOutcome(run: CheckRunFact): Outcome {
  if (run.status !== 'completed') return 'pending';
  return run.conclusion === 'success' || run.conclusion === 'neutral' || run.conclusion === 'skipped' ? 'success' : 'failure';
}

export function statusOutcome(status: CommitStatusFact): Outcome {
  if (status.state === 'success') return 'success';
  return status.state === 'failure' || status.state === 'error' ? 'failure' : 'pending';
}

/**
 * Decides a test run from its commit's checks. Check runs and commit statuses
 * both count, matched by name/context. A required name fails as soon as any
 * result by that name fails (no need to wait for the rest: the run is lost);
 * it passes when it has results and all succeeded; otherwise the run waits.
 * A re-run check replaces the earlier one (the highest id is the latest).
 * Nothing required never passes: the queue does not merge on zero checks.
 */
export function decideChecks(required: string[], checkRuns: CheckRunFact[], statuses: CommitStatusFact[]): ChecksVerdict {
  if (required.length === 0) return { verdict: 'waiting', missing: [] };
  const latestRuns = new Map<string, CheckRunFact>();
  for (const run of checkRuns) {
    const seen = latestRuns.get(run.name);
    if (!seen || run.id > seen.id) latestRuns.set(run.name, run);
  }
  const latestStatuses = new Map(statuses.map((status) => [status.context, status]));
  const failedChecks: string[] = [];
  const missing: string[] = [];
  for (const name of required) {
    const outcomes: Outcome[] = [];
    const run = latestRuns.get(name);
    if (run) outcomes.push(checkRunOutcome(run));
    const status = latestStatuses.get(name);
    if (status) outcomes.push(statusOutcome(status));
    if (outcomes.includes('failure')) failedChecks.push(name);
    else if (outcomes.length === 0 || outcomes.includes('pending')) missing.push(name);
  }
  if (failedChecks.length > 0) return { verdict: 'failed', failedChecks, checkRuns: report(latestRuns, latestStatuses) };
  if (missing.length > 0) return { verdict: 'waiting', missing };
  return { verdict: 'passed', checkRuns: report(latestRuns, latestStatuses) };
}

/** Every check on the commit, required or not: what people look at when a run fails. */
function report(runs: Map<string, CheckRunFact>, statuses: Map<string, CommitStatusFact>): CheckResult[] {
  return [
    ...[...runs.values()].map((run) => ({
      name: run.name,
      ...(run.url ? { url: run.url } : {}),
      status: run.status,
      ...(run.conclusion ? { conclusion: run.conclusion } : {}),
    })),
    ...[...statuses.values()].map((status) => ({
      name: status.context,
      ...(status.url ? { url: status.url } : {}),
      status: status.state === 'pending' ? 'pending' : 'completed',
      conclusion: status.state,
    })),
  ];
}
