/**
 * Pre-bisection in idle CI slots (probes.ts): while a batch tests and a slot
 * would sit idle, the part its failure would be split into first is tested
 * ahead of time on the same base. It decides nothing until the batch fails and
 * is split into exactly that part; if the batch passes it is cancelled.
 */
import type { EngineAction, EngineRun } from '../../src/engine/model.js';
import { facts, MINUTE, queueDriver } from './support/queue-driver.js';

type Driver = ReturnType<typeof queueDriver>;
const started = (q: Driver): EngineRun[] => q.log.flatMap((a) => (a.type === 'start_run' ? [a.run] : []));
const merges = (q: Driver) => q.log.filter((a): a is Extract<EngineAction, { type: 'merge' }> => a.type === 'merge');
const prs = (heads: EngineRun['unit']) => heads.map((h) => Number(h.entryId.slice(1)));
const submit = (q: Driver, n: number, risk: number, at = 0) => q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`), risk }, at);

/** #1 and #2 test; four safe PRs and a risky one wait and form one batch when #1 lands; #2 lands and leaves a slot idle. */
function batchWithProbe() {
  const q = queueDriver({ concurrency: 2 });
  [1, 2].forEach((n) => submit(q, n, 0.005));
  [3, 4, 5, 6].forEach((n) => submit(q, n, 0.005, MINUTE));
  submit(q, 7, 0.1, 2 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r1', passed: true }, 30 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'base1' }, 30 * MINUTE);
  const batch = started(q).at(-1) as EngineRun;
  expect(prs(batch.unit)).toEqual([3, 4, 5, 6, 7]);
  q.send({ type: 'run_finished', runId: 'r2', passed: true }, 31 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r2', ok: true, newBaseSha: 'base2' }, 31 * MINUTE);
  const [probe, ...more] = started(q).filter((r) => r.seq > batch.seq);
  // A failure would point at #7 (0.1 / 0.12: likely to break, tested alone) and leave #3-#6 together: that part is tested now,
  // on the batch's base and PRs ahead.
  expect(probe && [prs(probe.ahead), prs(probe.unit), probe.baseSha]).toEqual([prs(batch.ahead), [3, 4, 5, 6], batch.baseSha]);
  // At most half the slots: a PR arriving meanwhile may find one.
  expect(more).toEqual([]);
  return { q, batch, probe: probe as EngineRun };
}

test('a probe is cancelled when its batch passes, and never lands anything itself', () => {
  const { q, batch, probe } = batchWithProbe();
  q.send({ type: 'run_finished', runId: probe.id, passed: true }, 55 * MINUTE);
  const landed = merges(q).length;
  q.send({ type: 'run_finished', runId: batch.id, passed: true }, 60 * MINUTE);
  expect(merges(q).slice(landed).map((m) => m.runId)).toEqual([batch.id]);
  expect(q.state.probes).toBeUndefined();
  // A running probe is cancelled; this one had finished: nothing to cancel.
  expect(q.log.filter((a) => a.type === 'cancel_run')).toEqual([]);
});

test('a probe still running when its batch passes is cancelled', () => {
  const { q, batch, probe } = batchWithProbe();
  q.send({ type: 'run_finished', runId: batch.id, passed: true }, 60 * MINUTE);
  expect(q.log).toContainEqual({ type: 'cancel_run', runId: probe.id });
  expect(q.state.probes).toBeUndefined();
  expect(q.log.filter((a) => a.type === 'adopt_run')).toEqual([]);
});

test('when the batch fails, the passed probe is the first part: it lands at once, the suspect is tested on top of it', () => {
  const { q, batch, probe } = batchWithProbe();
  q.send({ type: 'run_finished', runId: probe.id, passed: true }, 55 * MINUTE);
  const before = started(q).length;
  q.send({ type: 'run_finished', runId: batch.id, passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  expect(merges(q).at(-1)).toMatchObject({ runId: probe.id, entryIds: ['e3', 'e4', 'e5', 'e6'] });
  // The runner is told, so the probe's record becomes its PRs' latest run.
  expect(q.log).toContainEqual({ type: 'adopt_run', runId: probe.id });
  expect(started(q).slice(before).map((r) => [prs(r.ahead).filter((n) => n > 2), prs(r.unit)])).toEqual([[[3, 4, 5, 6], [7]]]);
});

test('when the batch fails and so did the probe, the part is split again without testing it once more', () => {
  const { q, batch, probe } = batchWithProbe();
  q.send({ type: 'run_finished', runId: probe.id, passed: false, failedChecks: ['ci'] }, 55 * MINUTE);
  const before = started(q).length;
  q.send({ type: 'run_finished', runId: batch.id, passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  const after = started(q).slice(before).map((r) => prs(r.unit));
  expect(after).not.toContainEqual([3, 4, 5, 6]);
  // #3-#6 are split again at once, and its first parts take both slots: nothing is built on the part that failed.
  expect(after).toEqual([[3], [4]]);
  expect(merges(q).map((m) => m.runId)).toEqual(['r1', 'r2']);
});
