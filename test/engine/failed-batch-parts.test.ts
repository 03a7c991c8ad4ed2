/**
 * How adaptive tuning splits a failed batch (failures.ts packParts): by what
 * the failure says of each PR, the safest first and filled up to the batch
 * pass floor, a PR now likely to break alone and last; and a PR of a failed
 * batch that then fails alone is not retried as a possible flake.
 */
import type { EngineRun } from '../../src/engine/model.js';
import { LIKELY_BREAK } from '../../src/engine/order.js';
import { facts, MINUTE, queueDriver } from './support/queue-driver.js';

type Driver = ReturnType<typeof queueDriver>;
const started = (q: Driver): EngineRun[] => q.log.flatMap((a) => (a.type === 'start_run' ? [a.run] : []));
const prs = (heads: EngineRun['unit']) => heads.map((h) => Number(h.entryId.slice(1)));
const statuses = (q: Driver, pr: number) => q.log.flatMap((a) => (a.type === 'publish_status' && a.prNumber === pr ? [`${a.state}:${a.reason}`] : []));
const submit = (q: Driver, n: number, risk: number, at = 0) => q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`), risk }, at);
const risk = (q: Driver, n: number) => q.state.entries.find((e) => e.prNumber === n)?.risk ?? 0;

/** #1 and #2 test and land; #3 to #7 (#5 risky) wait meanwhile and form one batch, which fails. */
function failedBatch(config = {}) {
  const q = queueDriver({ concurrency: 2, ...config });
  submit(q, 1, 0.01);
  submit(q, 2, 0.01);
  // Far enough apart that the deferral of risky PRs (order.ts) keeps them in this order.
  [3, 4, 5, 6, 7].forEach((n, i) => submit(q, n, [0.01, 0.02, 0.3, 0.01, 0.02][i] as number, [2, 3, 4, 25, 26][i] as number * MINUTE));
  q.send({ type: 'run_finished', runId: 'r1', passed: true }, 30 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'base1' }, 30 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r2', passed: true }, 31 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r2', ok: true, newBaseSha: 'base2' }, 31 * MINUTE);
  const batch = started(q).find((r) => r.unit.length > 1) as EngineRun;
  expect(prs(batch.unit)).toEqual([3, 4, 5, 6, 7]);
  const before = started(q).length;
  q.send({ type: 'run_finished', runId: batch.id, passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  // With adaptive tuning the slot #2 left tests ahead of time the part a failure would test first (probes.ts).
  const probes = started(q).slice(0, before).filter((r) => r.seq > batch.seq);
  return { q, probes: probes.map((r) => [prs(r.ahead), prs(r.unit)]), after: started(q).slice(before).map((r) => [prs(r.ahead), prs(r.unit)]) };
}

test('a failed batch of safe PRs and one suspect is split in two: the safe ones together first, the suspect alone on top of them', () => {
  const { q, probes, after } = failedBatch();
  // The failure points at #5 (0.3 before, likely to break now); the other four still pass together often enough.
  expect(risk(q, 5)).toBeGreaterThanOrEqual(LIKELY_BREAK);
  for (const n of [3, 4, 6, 7]) expect(risk(q, n)).toBeLessThan(0.1);
  // Safest first (#3 and #6 before #4 and #7), the suspect last: its failure sinks nothing behind it.
  // The first part was foreseen and already testing in the slot #2 left (a probe): it becomes the part's run.
  expect(probes).toEqual([[[1, 2], [3, 6, 4, 7]]]); // On the batch's base and PRs ahead (landed since).
  expect(after).toEqual([[[3, 6, 4, 7], [5]]]);
  expect(q.state.entries.filter((e) => e.prNumber >= 3).sort((a, b) => (a.place ?? 0) - (b.place ?? 0)).map((e) => e.prNumber)).toEqual([3, 6, 4, 7, 5]);
});

test('a fixed queue splits a failed batch evenly in its order, the suspect apart', () => {
  const { after } = failedBatch({ tuning: 'fixed', batch: true, batchingMinSize: 1, batchingMaxWaitTimeMinutes: 0, bisectionConcurrency: 2 });
  // Fixed tuning keeps the risks it was given: #5 at 0.3 is no suspect; two even parts in order.
  expect(after[0]).toEqual([[], [3, 4, 5]]);
});

test('a PR of a failed batch that fails alone is ejected, not retried as a flake, though its risk is low', () => {
  const q = queueDriver({ concurrency: 2 });
  submit(q, 1, 0.01);
  submit(q, 2, 0.01);
  submit(q, 3, 0.01, 2 * MINUTE);
  submit(q, 4, 0.3, 20 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r1', passed: true }, 30 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'base1' }, 30 * MINUTE);
  const batch = started(q).at(-1) as EngineRun;
  expect(prs(batch.unit)).toEqual([3, 4]);
  q.send({ type: 'run_finished', runId: 'r2', passed: true }, 31 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r2', ok: true, newBaseSha: 'base2' }, 31 * MINUTE);
  q.send({ type: 'run_finished', runId: batch.id, passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  // The failure points at #4; #3 stays below the risk a lone failure is retried under.
  expect(risk(q, 3)).toBeLessThan(0.15);
  const alone = started(q).find((r) => prs(r.unit).join() === '3') as EngineRun;
  q.send({ type: 'run_finished', runId: alone.id, passed: false, failedChecks: ['ci'] }, 90 * MINUTE);
  expect(statuses(q, 3).at(-1)).toBe('FAILED:failed_tests');
  expect(statuses(q, 3)).not.toContain('TESTING:retried');
});
