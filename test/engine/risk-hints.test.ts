/**
 * Risk-aware speculation (issue 12, point 3): a PR's risk hint places it where
 * its failure costs least: safer PRs go ahead of it and batch together, it is
 * tested alone, and the runs behind a PR likelier to break than not are built
 * without it.
 */
import type { EngineRun } from '../../src/engine/model.js';
import { PROVEN_RISK } from '../../src/engine/risk.js';
import { facts, MINUTE, queueDriver } from './support/queue-driver.js';

type Driver = ReturnType<typeof queueDriver>;
const started = (q: Driver): EngineRun[] => q.log.flatMap((a) => (a.type === 'start_run' ? [a.run] : []));
const prs = (heads: EngineRun['unit']) => heads.map((h) => Number(h.entryId.slice(1)));
const submit = (q: Driver, n: number, risk: number, at = 0, targets?: string[], noBatch = false) =>
  q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch, facts: facts(`h${n}`), risk, ...(targets ? { targets: { sha: `h${n}`, targets } } : {}) }, at);
const cancelled = (q: Driver) => q.log.flatMap((a) => (a.type === 'cancel_run' ? [a.runId] : []));

test('safer PRs submitted soon after a risky one go ahead of it and batch together; the risky one is tested alone', () => {
  const q = queueDriver({ concurrency: 1 });
  submit(q, 1, 0.02); // alone at once: the queue is idle
  submit(q, 2, 0.7, MINUTE);
  submit(q, 3, 0.02, 2 * MINUTE);
  submit(q, 4, 0.02, 3 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r1', passed: true }, 30 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'base1' }, 30 * MINUTE);
  expect(started(q).map((r) => prs(r.unit))).toEqual([[1], [3, 4]]);
  q.send({ type: 'run_finished', runId: 'r2', passed: true }, 60 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r2', ok: true, newBaseSha: 'base2' }, 60 * MINUTE);
  expect(prs(started(q).at(-1)?.unit ?? [])).toEqual([2]);
});

test('without hints the same PRs keep their order (the deferral is only for what a hint says)', () => {
  const q = queueDriver({ concurrency: 1 });
  for (const n of [1, 2, 3, 4]) q.submit(n, (n - 1) * MINUTE);
  q.send({ type: 'run_finished', runId: 'r1', passed: true }, 30 * MINUTE);
  expect(prs(started(q)[1]?.unit ?? [])).toEqual([2, 3, 4]);
});

test('runs behind a PR likely to break are built without it; its failure costs them nothing', () => {
  const q = queueDriver({ concurrency: 3 });
  submit(q, 1, 0.9);
  submit(q, 2, 0.9, MINUTE);
  submit(q, 3, 0.9, 2 * MINUTE);
  const [r1, r2, r3] = started(q);
  expect([r1, r2, r3].map((r) => [prs(r?.ahead ?? []), prs(r?.unit ?? [])])).toEqual([
    [[], [1]],
    [[], [2]],
    [[], [3]],
  ]);
  q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] }, 30 * MINUTE);
  expect(q.states()).toEqual({ 2: 'TESTING', 3: 'TESTING' });
  expect(cancelled(q)).toEqual([]);
});

test('a risky PR that passes goes behind the runs built without it and is tested again on top, instead of dropping them', () => {
  const q = queueDriver({ concurrency: 3 });
  submit(q, 1, 0.9);
  submit(q, 2, 0.02, MINUTE);
  submit(q, 3, 0.02, 2 * MINUTE);
  expect(started(q).map((r) => [prs(r.ahead), prs(r.unit)])).toEqual([
    [[], [1]],
    [[], [2]],
    [[2], [3]],
  ]);
  q.send({ type: 'run_finished', runId: 'r1', passed: true }, 30 * MINUTE);
  // #1's pass did not invalidate r2 and r3; #1 is tested again behind them.
  expect(cancelled(q)).toEqual([]);
  expect(started(q).at(-1)).toMatchObject({ id: 'r4', ahead: [{ entryId: 'e2' }, { entryId: 'e3' }], unit: [{ entryId: 'e1' }] });
  q.send({ type: 'run_finished', runId: 'r3', passed: true }, 31 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r2', passed: true }, 31 * MINUTE);
  expect(q.log).toContainEqual(expect.objectContaining({ type: 'merge', runId: 'r2', entryIds: ['e2'] }));
  q.send({ type: 'merge_finished', runId: 'r2', ok: true, newBaseSha: 'base1' }, 32 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r3', ok: true, newBaseSha: 'base2' }, 33 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r4', passed: true }, 60 * MINUTE);
  expect(q.log).toContainEqual(expect.objectContaining({ type: 'merge', runId: 'r4', entryIds: ['e1'] }));
  // Its pass answered the prediction: it is not deferred a second time, and counts as a safe PR now.
  expect(q.state.entries.find((e) => e.id === 'e1')?.risk).toBe(PROVEN_RISK);
});

test('in a parallel queue a lane run built without a risky PR does not land before that PR is decided', () => {
  const q = queueDriver({ concurrency: 3, mode: 'parallel' });
  submit(q, 1, 0.9, 0, ['x']);
  submit(q, 2, 0.02, MINUTE, ['x'], true); // alone, so it starts without waiting for a batch
  const [, r2] = started(q);
  expect(prs(r2?.ahead ?? [])).toEqual([]);
  q.send({ type: 'run_finished', runId: 'r2', passed: true }, 20 * MINUTE);
  expect(q.log.some((a) => a.type === 'merge')).toBe(false);
  q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] }, 30 * MINUTE);
  expect(q.log).toContainEqual(expect.objectContaining({ type: 'merge', runId: 'r2', entryIds: ['e2'] }));
});

test('a PR at 45 % is bet against too: below even odds, the runs behind are built without it', () => {
  const q = queueDriver({ concurrency: 2 });
  submit(q, 1, 0.45);
  submit(q, 2, 0.02, MINUTE);
  expect(started(q).map((r) => [prs(r.ahead), prs(r.unit)])).toEqual([
    [[], [1]],
    [[], [2]],
  ]);
});
