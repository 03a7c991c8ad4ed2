/**
 * Flake tolerance: with retryFailedTests N, a PR whose own run failed its checks
 * is tested again up to N times (each retry on its timeline, reason `retried`)
 * before it is ejected; a conflict is never retried.
 */
import { facts, queueDriver } from './support/queue-driver.js';

function queue(retryFailedTests: number) {
  const q = queueDriver({ concurrency: 1, retryFailedTests });
  const statuses = (pr: number) => q.log.flatMap((a) => (a.type === 'publish_status' && a.prNumber === pr ? [`${a.state}:${a.reason}${a.detail ? `:${a.detail}` : ''}`] : []));
  const runs = () => q.log.flatMap((a) => (a.type === 'start_run' ? [a.run.id] : []));
  return Object.assign(q, { statuses, runs });
}

test('a failing PR is tested again twice, each retry shown with the failed check, then ejected', () => {
  const q = queue(2);
  q.send({ type: 'submitted', entryId: 'e1', prNumber: 1, priority: 100, noBatch: false, facts: facts('h1') });
  q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] });
  q.send({ type: 'run_finished', runId: 'r2', passed: false, failedChecks: ['ci'] });
  expect(q.state.entries.map((e) => e.retries)).toEqual([2]);
  q.send({ type: 'run_finished', runId: 'r3', passed: false, failedChecks: ['ci'] });
  expect(q.runs()).toEqual(['r1', 'r2', 'r3']);
  expect(q.statuses(1)).toEqual([
    'PENDING:ready',
    'TESTING:test_started',
    'TESTING:retried:retry 1 of 2 after: ci',
    'TESTING:retried:retry 2 of 2 after: ci',
    'FAILED:failed_tests:ci',
  ]);
});

test('a retry that passes merges; without retries (the default) the first failure ejects', () => {
  const flaky = queue(1);
  flaky.send({ type: 'submitted', entryId: 'e1', prNumber: 1, priority: 100, noBatch: false, facts: facts('h1') });
  flaky.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] });
  const passed = flaky.send({ type: 'run_finished', runId: 'r2', passed: true, failedChecks: [] });
  expect(passed.actions).toContainEqual(expect.objectContaining({ type: 'merge', runId: 'r2' }));

  const strict = queue(0);
  strict.send({ type: 'submitted', entryId: 'e1', prNumber: 1, priority: 100, noBatch: false, facts: facts('h1') });
  strict.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] });
  expect(strict.statuses(1).at(-1)).toBe('FAILED:failed_tests:ci');
});

test('a merge conflict is not retried', () => {
  const q = queue(3);
  q.send({ type: 'submitted', entryId: 'e1', prNumber: 1, priority: 100, noBatch: false, facts: facts('h1') });
  q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['merge conflict'], conflictEntryId: 'e1' });
  expect(q.statuses(1).at(-1)).toMatch(/^FAILED:merge_conflict/);
  expect(q.runs()).toEqual(['r1']);
});
