/**
 * A run that passed vouches for every PR in it (adaptive tuning): a PR does not
 * break the build if a run with it passed, so a failure that seems its own is a
 * flake's (or its neighbours'). It is tested again rather than ejected, and a
 * failed batch's blame goes to the PRs no run vouched for.
 */
import type { EngineRun } from '../../src/engine/model.js';
import { facts, MINUTE, queueDriver } from './support/queue-driver.js';

type Driver = ReturnType<typeof queueDriver>;
const started = (q: Driver): EngineRun[] => q.log.flatMap((a) => (a.type === 'start_run' ? [a.run] : []));
const prs = (heads: EngineRun['unit']) => heads.map((h) => Number(h.entryId.slice(1)));
const runs = (q: Driver) => started(q).map((r) => [r.id, prs(r.ahead), prs(r.unit)]);
const statuses = (q: Driver, pr: number) => q.log.flatMap((a) => (a.type === 'publish_status' && a.prNumber === pr ? [`${a.state}:${a.reason}`] : []));
const submit = (q: Driver, n: number, risk: number, at = 0) => q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`), risk }, at);
const entry = (q: Driver, n: number) => q.state.entries.find((e) => e.prNumber === n);

/** #1 (30 %: alone, and ejected at its first failure) and #2 on top of it. */
function oneOnTwo() {
  const q = queueDriver({ concurrency: 2 });
  submit(q, 1, 0.3);
  submit(q, 2, 0.02);
  expect(runs(q)).toEqual([
    ['r1', [], [1]],
    ['r2', [1], [2]],
  ]);
  return q;
}

test('a PR whose own run failed after a run built on it passed is tested again, not ejected', () => {
  const q = oneOnTwo();
  q.send({ type: 'run_finished', runId: 'r2', passed: true }, 29 * MINUTE);
  expect(entry(q, 1)?.vouched).toBe(true);
  q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] }, 30 * MINUTE);
  expect(statuses(q, 1)).toContain('TESTING:retried');
  expect(statuses(q, 1)).not.toContain('FAILED:failed_tests');
  // Tested again at once, with #2 (it is not set apart as likely to break: a run vouched for it); once only.
  expect(runs(q).slice(2)[0]).toEqual(['r3', [], [1, 2]]);
  expect(entry(q, 1)?.retries).toBe(1);
});

test('without that pass (its own run failed first), the same PR is ejected at once', () => {
  const q = oneOnTwo();
  q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] }, 30 * MINUTE);
  expect(entry(q, 1)?.vouched).toBeUndefined();
  expect(statuses(q, 1).at(-1)).toBe('FAILED:failed_tests');
});

test("a failed batch's blame goes to its PRs no passed run vouched for", () => {
  const q = oneOnTwo();
  q.send({ type: 'run_finished', runId: 'r2', passed: true }, 29 * MINUTE);
  submit(q, 3, 0.02, 29 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] }, 30 * MINUTE);
  const batch = started(q).find((r) => prs(r.unit).join() === '1,2,3') as EngineRun;
  expect(batch).toBeDefined();
  q.send({ type: 'run_finished', runId: batch.id, passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  // #3 alone could have failed it: P(#3 breaks | the batch failed) = 0.02 / (1 - 0.98). #1 and #2 keep their risks.
  expect(entry(q, 3)?.risk).toBeCloseTo(1, 9);
  expect(entry(q, 1)?.risk).toBe(0.3);
  expect(entry(q, 2)?.risk).toBe(0.02);
});
