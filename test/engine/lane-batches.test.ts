/**
 * Batching inside parallel lanes: a batch takes the waiting PRs of the first
 * PR's lane (its targets overlap theirs), passes over other lanes' PRs, never
 * pulls a PR past another lane's PR it depends on, and a failed batch is
 * bisected within the lane.
 */
import type { EngineRun } from '../../src/engine/model.js';
import { facts, queueDriver } from './support/queue-driver.js';

const started = (q: ReturnType<typeof queueDriver>): EngineRun[] => q.log.flatMap((a) => (a.type === 'start_run' ? [a.run] : []));
const units = (q: ReturnType<typeof queueDriver>) => started(q).map((r) => r.unit.map((u) => u.entryId).join('+'));

function lanes(config: Record<string, unknown> = {}) {
  const q = queueDriver({ mode: 'parallel', concurrency: 4, batch: true, batchingMinSize: 2, batchingMaxWaitTimeMinutes: 30, bisectionConcurrency: 2, ...config });
  const submit = (n: number, targets: string[]) =>
    q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`), targets: { sha: `h${n}`, targets } });
  return Object.assign(q, { submitWith: submit });
}

test('each lane batches its own PRs; another lane\'s PRs in between are passed over, not taken', () => {
  const q = lanes();
  q.submitWith(1, ['//api']);
  q.submitWith(2, ['//web']);
  q.submitWith(3, ['//api']);
  q.submitWith(4, ['//web']);
  expect(units(q)).toEqual(['e1+e3', 'e2+e4']);
  expect(started(q).every((r) => r.ahead.length === 0)).toBe(true);
});

test('a PR of the lane that also touches a passed-over lane\'s PR ahead of it ends the batch', () => {
  const q = lanes({ batchingMinSize: 3, batchingMaxWaitTimeMinutes: 0 });
  q.submitWith(1, ['//api']);
  q.submitWith(2, ['//web']);
  q.submitWith(3, ['//api', '//web']);
  // #3 depends on #2 (web) as well as #1 (api): batched with #1 it would overtake #2.
  const first = started(q).find((r) => r.unit.some((u) => u.entryId === 'e1'));
  expect(first?.unit.map((u) => u.entryId)).toEqual(['e1']);
});

test('a failed lane batch is bisected within the lane; the other lane keeps its run', () => {
  const q = lanes();
  q.submitWith(1, ['//api']);
  q.submitWith(2, ['//web']);
  q.submitWith(3, ['//api']);
  q.submitWith(4, ['//web']);
  const apiRun = started(q).find((r) => r.unit.some((u) => u.entryId === 'e1')) as EngineRun;
  q.send({ type: 'run_finished', runId: apiRun.id, passed: false, failedChecks: ['ci'] });
  const after = started(q).slice(2);
  expect(after.map((r) => r.unit.map((u) => u.entryId).join('+')).sort()).toEqual(['e1', 'e3']);
  expect(after.every((r) => r.isBisection)).toBe(true);
  expect(q.state.runs.some((r) => r.unit.map((u) => u.entryId).join('+') === 'e2+e4' && r.status === 'running')).toBe(true);
});
