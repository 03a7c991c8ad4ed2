/**
 * Direct merge (directMergeMode: always): the engine marks a run `direct` only
 * when it is one PR with nothing ahead of it and nothing else in flight or
 * waiting to land; the host then decides whether CI can be skipped.
 */
import type { EngineRun } from '../../src/engine/model.js';
import { MINUTE, queueDriver } from './support/queue-driver.js';

const started = (q: ReturnType<typeof queueDriver>): EngineRun[] => q.log.flatMap((a) => (a.type === 'start_run' ? [a.run] : []));

test('the first PR of an idle queue is a direct candidate; the one behind it, tested on top of it, is not', () => {
  const q = queueDriver({ concurrency: 3, directMergeMode: 'always' });
  q.submit(1);
  q.submit(2);
  const [first, second] = started(q);
  expect(first).toMatchObject({ direct: true, ahead: [], unit: [{ entryId: 'e1' }] });
  expect(second?.direct).toBeUndefined();
  expect(second?.ahead).toEqual([{ entryId: 'e1', headSha: 'h1' }]);
});

test('a direct run that passed lands like any run; the next PR is a candidate again once the queue is idle', () => {
  const q = queueDriver({ concurrency: 1, directMergeMode: 'always' });
  q.submit(1);
  const passed = q.send({ type: 'run_finished', runId: 'r1', passed: true });
  expect(passed.actions).toContainEqual(expect.objectContaining({ type: 'merge', runId: 'r1', entryIds: ['e1'] }));
  // While #1 lands, #2 is tested on top of it: not a candidate.
  q.submit(2, MINUTE);
  expect(started(q).at(-1)).toMatchObject({ id: 'r2', ahead: [{ entryId: 'e1' }] });
  expect(started(q).at(-1)?.direct).toBeUndefined();
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'base1' }, 2 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r2', passed: true }, 3 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r2', ok: true, newBaseSha: 'base2' }, 4 * MINUTE);
  // The queue idle again: the next PR is a candidate, on the new base.
  q.submit(3, 5 * MINUTE);
  expect(started(q).at(-1)).toMatchObject({ id: 'r3', baseSha: 'base2', ahead: [], direct: true });
});

test('never a candidate: the mode off (the default), a batch, a bisection half, or a PR retried after a failure', () => {
  const off = queueDriver({ concurrency: 1 });
  off.submit(1);
  expect(started(off)[0]?.direct).toBeUndefined();

  const batched = queueDriver({ concurrency: 1, batch: true, batchingMinSize: 2, batchingMaxWaitTimeMinutes: 10, directMergeMode: 'always' });
  batched.submit(1);
  batched.submit(2);
  expect(started(batched)[0]).toMatchObject({ unit: [{ entryId: 'e1' }, { entryId: 'e2' }] });
  expect(started(batched)[0]?.direct).toBeUndefined();
  batched.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] });
  expect(started(batched).slice(1).every((r) => r.isBisection && r.direct === undefined)).toBe(true);

  const retried = queueDriver({ concurrency: 1, directMergeMode: 'always', retryFailedTests: 1 });
  retried.submit(1);
  retried.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] });
  expect(started(retried).map((r) => [r.id, r.direct ?? false])).toEqual([
    ['r1', true],
    ['r2', false],
  ]);
});
