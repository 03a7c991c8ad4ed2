/**
 * Adaptive flake tolerance: a PR that fails alone though its risk (hint or
 * author's record) says it rarely breaks is tested once more, set apart, before
 * it is ejected; a risky PR, or one the queue knows nothing about, is ejected
 * at its first failure as before.
 */
import { MINUTE, queueDriver, runShapes as runs, startedRuns as started, submitWithRisk as submit } from './support/queue-driver.js';

type Driver = ReturnType<typeof queueDriver>;

const statuses = (q: Driver, pr: number) => q.log.flatMap((a) => (a.type === 'publish_status' && a.prNumber === pr ? [`${a.state}:${a.reason}${a.detail ? `:${a.detail}` : ''}`] : []));

test('a PR predicted safe that fails alone is tested again apart; when it passes it lands after the PR the queue went on with', () => {
  const q = queueDriver({ concurrency: 2 });
  submit(q, 1, 0.02);
  submit(q, 2, 0.02);
  expect(runs(q)).toEqual([
    ['r1', [], [1]],
    ['r2', [1], [2]],
  ]);
  q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] }, 30 * MINUTE);
  expect(statuses(q, 1)).toContain('TESTING:retried:retry 1 of 1 after: ci');
  // The retry does not hold up #2: it is built without #1 now.
  expect(runs(q).slice(2)).toEqual([
    ['r3', [], [1]],
    ['r4', [], [2]],
  ]);
  q.send({ type: 'run_finished', runId: 'r3', passed: true }, 60 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r4', passed: true }, 60 * MINUTE);
  expect(q.log).toContainEqual(expect.objectContaining({ type: 'merge', runId: 'r4', entryIds: ['e2'] }));
  // #1 passed its retry: tested once more on top of #2, then it lands.
  expect(runs(q).at(-1)).toEqual(['r5', [2], [1]]);
  q.send({ type: 'merge_finished', runId: 'r4', ok: true, newBaseSha: 'base1' }, 61 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r5', passed: true }, 91 * MINUTE);
  expect(q.log.filter((a) => a.type === 'merge').at(-1)).toMatchObject({ runId: 'r5', entryIds: expect.arrayContaining(['e1']) as unknown });
});

test('a PR predicted safe that fails its retry too is ejected', () => {
  const q = queueDriver({ concurrency: 1 });
  submit(q, 1, 0.02);
  q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] }, 30 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r2', passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  expect(statuses(q, 1).at(-1)).toBe('FAILED:failed_tests:ci');
});

test('a risky PR, or one the queue knows nothing about, is ejected at its first failure; a fixed queue retries only as set', () => {
  const risky = queueDriver({ concurrency: 1 });
  submit(risky, 1, 0.3);
  const unknown = queueDriver({ concurrency: 1 });
  submit(unknown, 1);
  const fixed = queueDriver({ concurrency: 1, batch: false });
  submit(fixed, 1, 0.02);
  for (const q of [risky, unknown, fixed]) {
    q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] }, 30 * MINUTE);
    expect(statuses(q, 1).at(-1)).toBe('FAILED:failed_tests:ci');
    expect(started(q)).toHaveLength(1);
  }
});
