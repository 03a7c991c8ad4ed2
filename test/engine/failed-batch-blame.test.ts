/**
 * What a failed batch says (adaptive tuning): one of its PRs breaks, so each is
 * now as likely to break as P(it breaks | the batch failed). A PR that becomes
 * likelier to break than not is tested apart, and the runs behind are built
 * without it instead of on a content known to fail.
 */
import type { EngineRun } from '../../src/engine/model.js';
import { facts, MINUTE, queueDriver } from './support/queue-driver.js';

type Driver = ReturnType<typeof queueDriver>;
const started = (q: Driver): EngineRun[] => q.log.flatMap((a) => (a.type === 'start_run' ? [a.run] : []));
const prs = (heads: EngineRun['unit']) => heads.map((h) => Number(h.entryId.slice(1)));
const submit = (q: Driver, n: number, risk: number, at = 0) => q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`), risk }, at);
const risk = (q: Driver, n: number) => q.state.entries.find((e) => e.prNumber === n)?.risk;
/** The runs started after the first `from`, as [PRs ahead from #5 on, unit]. */
const runsSince = (q: Driver, from: number) => started(q).slice(from).map((r) => [prs(r.ahead).filter((n) => n >= 5), prs(r.unit)]);

/** Four single runs in flight, then a batch of #5 and #6 and, waiting behind it, #7 (1 %). */
function failedBatch(riskOf5: number, riskOf6: number) {
  const q = queueDriver({ concurrency: 4 });
  for (const n of [1, 2, 3, 4]) submit(q, n, 0.01);
  submit(q, 5, riskOf5, MINUTE);
  submit(q, 6, riskOf6, MINUTE);
  q.send({ type: 'run_finished', runId: 'r1', passed: true }, 30 * MINUTE);
  expect(prs((started(q).at(-1) as EngineRun).unit)).toEqual([5, 6]);
  const batch = (started(q).at(-1) as EngineRun).id;
  submit(q, 7, 0.01, 35 * MINUTE);
  const from = started(q).length;
  for (const id of ['r2', 'r3', 'r4']) q.send({ type: 'run_finished', runId: id, passed: true }, 40 * MINUTE);
  // #7 on the batch; an idle slot may test ahead of time the part a failure would test first (probes.ts).
  expect(runsSince(q, from)[0]).toEqual([[5, 6], [7]]);
  const before = started(q).length;
  q.send({ type: 'run_finished', runId: batch, passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  return { q, before };
}

test('both PRs of a failed pair become likelier to break than not: each is tested alone and the runs behind are built without them', () => {
  const { q, before } = failedBatch(0.1, 0.1);
  // 0.1 / (1 - 0.9 · 0.9) = 0.53 each.
  expect(risk(q, 5)).toBeCloseTo(0.1 / 0.19, 9);
  expect(risk(q, 6)).toBeCloseTo(0.1 / 0.19, 9);
  // Without the blame #6 would be built on #5 and #7 on both, a content that just failed.
  expect(runsSince(q, before)).toEqual([
    [[], [5]],
    [[], [6]],
    [[], [7]],
  ]);
});

test('the blame follows the risks: the riskier PR is set apart, the safer one stays in the line the runs behind are built on', () => {
  const { q, before } = failedBatch(0.01, 0.1);
  // #6: 0.1 / (1 - 0.99 · 0.9) = 0.92; #5: 0.01 / 0.109 = 0.09.
  expect(risk(q, 6)).toBeGreaterThan(0.9);
  expect(risk(q, 5)).toBeLessThan(0.1);
  // #5 alone was already testing in an idle slot (a probe): its run is kept, not started again.
  expect(runsSince(q, before - 1)).toEqual([
    [[], [5]],
    [[5], [6]],
    [[5], [7]],
  ]);
  expect(q.state.runs.map((r) => prs(r.unit))).toContainEqual([5]);
});

test('a fixed queue keeps the risks it was given when a batch fails', () => {
  const q = queueDriver({ concurrency: 1, batch: true, batchingMinSize: 1, bisectionConcurrency: 2 });
  submit(q, 1, 0.01);
  submit(q, 2, 0.1, MINUTE);
  submit(q, 3, 0.1, MINUTE);
  q.send({ type: 'run_finished', runId: 'r1', passed: true }, 30 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'base1' }, 30 * MINUTE);
  expect(prs((started(q).at(-1) as EngineRun).unit)).toEqual([2, 3]);
  q.send({ type: 'run_finished', runId: 'r2', passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  expect([risk(q, 2), risk(q, 3)]).toEqual([0.1, 0.1]);
});
