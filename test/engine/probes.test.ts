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

test('a probe that hit a merge conflict is not adopted: its part is tested as a run of its own, whose conflict ejects the PR as a conflict', () => {
  const { q, batch, probe } = batchWithProbe();
  q.send({ type: 'run_finished', runId: probe.id, passed: false, failedChecks: ['merge conflict'], conflictEntryId: 'e4' }, 55 * MINUTE);
  const before = started(q).length;
  q.send({ type: 'run_finished', runId: batch.id, passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  expect(q.log.filter((a) => a.type === 'adopt_run')).toEqual([]);
  const part = started(q).slice(before).find((r) => prs(r.unit).join() === '3,4,5,6');
  expect(part && part.id).not.toBe(probe.id);
  q.send({ type: 'run_finished', runId: (part as EngineRun).id, passed: false, failedChecks: ['merge conflict'], conflictEntryId: 'e4' }, 90 * MINUTE);
  expect(q.log).toContainEqual(expect.objectContaining({ type: 'publish_status', prNumber: 4, state: 'FAILED', reason: 'merge_conflict' }));
  expect(q.log.filter((a) => a.type === 'publish_status' && a.state === 'FAILED' && a.reason === 'failed_tests').map((a) => (a as { prNumber: number }).prNumber)).not.toContain(4);
});

// Found in review: a probe is adopted only if it tested what its part is tested on now.
const ended = (q: Driver) => q.log.flatMap((a) => (a.type === 'publish_status' && ['FAILED', 'MERGED'].includes(a.state) ? [`#${a.prNumber} ${a.state}`] : []));
/** CI's truth: every run whose content holds the breaking PR fails. */
const verdict = (q: Driver, run: EngineRun, breaking: string, at: number) =>
  q.send({ type: 'run_finished', runId: run.id, passed: ![...run.ahead, ...run.unit].some((h) => h.entryId === breaking), failedChecks: ['ci'] }, at);

test('parallel: a probe built on another lane’s breaking PR is not adopted for a part that no longer is; the innocent PR is not ejected', () => {
  const q = queueDriver({ concurrency: 4, mode: 'parallel' });
  const submitIn = (n: number, risk: number, targets: string[], at = 0) =>
    q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`), risk, targets: { sha: `h${n}`, targets } }, at);
  [1, 2, 3].forEach((n) => submitIn(n, 0.005, ['t3']));
  submitIn(20, 0.005, ['t2']); // Breaks the build.
  submitIn(10, 0.001, ['t1'], MINUTE);
  submitIn(11, 0.01, ['t1', 't2'], MINUTE); // Overlaps #20's lane: the batch [#10, #11] is built on #20.
  const runOfPr = (n: number) => started(q).find((r) => !r.probeOf && r.unit.length === 1 && r.unit[0]?.entryId === `e${n}`) as EngineRun;
  [1, 2, 3].forEach((n, i) => {
    q.send({ type: 'run_finished', runId: runOfPr(n).id, passed: true }, (30 + i) * MINUTE);
    q.send({ type: 'merge_finished', runId: runOfPr(n).id, ok: true, newBaseSha: `base${n}` }, (30 + i) * MINUTE);
  });
  const batch = started(q).find((r) => !r.probeOf && r.unit.length > 1) as EngineRun;
  const probes = started(q).filter((r) => r.probeOf === batch.id);
  expect(probes.map((p) => [prs(p.ahead), prs(p.unit)])).toEqual([[[20], [10]]]);
  // The probe reports first (failed, for #20), then the batch.
  for (const p of probes) verdict(q, p, 'e20', 45 * MINUTE);
  verdict(q, batch, 'e20', 50 * MINUTE);
  expect(q.log.filter((a) => a.type === 'adopt_run')).toEqual([]);
  expect(ended(q)).not.toContain('#10 FAILED');
});

test('single: a probe built on a PR now placed behind its part is not adopted; the innocent PR is not ejected', () => {
  const q = queueDriver({ concurrency: 4 });
  [1, 2, 3, 4].forEach((n) => submit(q, n, 0.005));
  submit(q, 10, 0.01, MINUTE);
  submit(q, 11, 0.02, MINUTE);
  submit(q, 12, 0.03, MINUTE);
  [1, 2, 3, 4].forEach((n, i) => {
    q.send({ type: 'run_finished', runId: `r${n}`, passed: true }, (30 + i) * MINUTE);
    q.send({ type: 'merge_finished', runId: `r${n}`, ok: true, newBaseSha: `base${n}` }, (30 + i) * MINUTE);
  });
  const batch = started(q).find((r) => !r.probeOf && r.unit.length > 1) as EngineRun;
  const probes = started(q).filter((r) => r.probeOf === batch.id);
  // #11's probe is built on #10's.
  expect(probes.map((p) => [prs(p.ahead).filter((n) => n > 4), prs(p.unit)])).toEqual([
    [[], [10]],
    [[10], [11]],
  ]);
  // #10's risk rises (a re-submit with a hint): a failure now puts #11 first and #10 after it.
  q.send({ type: 'priority_changed', entryId: 'e10', priority: 100, noBatch: false, risk: 0.025 }, 40 * MINUTE);
  for (const p of probes) verdict(q, p, 'e10', 45 * MINUTE);
  verdict(q, batch, 'e10', 50 * MINUTE);
  // #11's probe failed for #10, which is no longer ahead of #11's part: not adopted, #11 is tested again.
  expect(q.log).not.toContainEqual({ type: 'adopt_run', runId: probes[1]?.id });
  expect(ended(q)).not.toContain('#11 FAILED');
});

test('no probe tests its batch’s whole content again (the last part on top of all the others)', () => {
  const q = queueDriver({ concurrency: 6 });
  for (let n = 1; n <= 6; n++) submit(q, n, 0.005);
  [100, 101, 102].forEach((n) => submit(q, n, 0.005, MINUTE));
  for (let n = 1; n <= 6; n++) {
    q.send({ type: 'run_finished', runId: `r${n}`, passed: true }, (29 + n) * MINUTE);
    q.send({ type: 'merge_finished', runId: `r${n}`, ok: true, newBaseSha: `base${n}` }, (29 + n) * MINUTE);
  }
  const content = (r: EngineRun) => [r.baseSha, ...prs(r.ahead), ...prs(r.unit).sort()].join();
  const runs = started(q);
  expect(runs.some((r) => r.probeOf)).toBe(true);
  for (const probe of runs.filter((r) => r.probeOf)) expect(content(probe)).not.toBe(content(runs.find((b) => b.id === probe.probeOf) as EngineRun));
});

test('a host outage does not count toward a probe’s time-out: its run is not thrown away', () => {
  const { q, probe } = batchWithProbe();
  q.send({ type: 'host_unavailable', message: 'down' }, 40 * MINUTE);
  const limit = q.state.config.testingTimeoutMinutes * MINUTE;
  q.send({ type: 'tick' }, probe.startedAt + limit + MINUTE);
  expect(q.log).not.toContainEqual({ type: 'cancel_run', runId: probe.id });
  q.send({ type: 'host_recovered' }, probe.startedAt + limit + 2 * MINUTE);
  expect(started(q).filter((r) => r.probeOf && r.id !== probe.id)).toEqual([]);
});
