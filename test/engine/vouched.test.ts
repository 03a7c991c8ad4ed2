/**
 * A run that passed vouches for every PR in it (adaptive tuning): a PR does not
 * break the build if a run with it passed, so a failure that seems its own is a
 * flake's (or its neighbours'). It is tested again rather than ejected, and a
 * failed batch's blame goes to the PRs no run vouched for.
 */
import type { EngineRun } from '../../src/engine/model.js';
import { MINUTE, prNumbers as prs, queueDriver, runShapes as runs, startedRuns as started, submitWithRisk as submit } from './support/queue-driver.js';

type Driver = ReturnType<typeof queueDriver>;

const statuses = (q: Driver, pr: number) => q.log.flatMap((a) => (a.type === 'publish_status' && a.prNumber === pr ? [`${a.state}:${a.reason}`] : []));
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
  // Tested again at once (not set apart as likely to break: a passed run held it).
  expect(runs(q).slice(2).some(([, , unit]) => (unit as number[]).includes(1))).toBe(true);
  expect(entry(q, 1)?.retries).toBe(1);
});

test('without that pass (its own run failed first), the same PR is ejected at once', () => {
  const q = oneOnTwo();
  q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] }, 30 * MINUTE);
  expect(entry(q, 1)?.vouched).toBeUndefined();
  expect(statuses(q, 1).at(-1)).toBe('FAILED:failed_tests');
});

/**
 * #1 (30 %) alone, #2 on it, #3 on both; #2's run passes, then #1's fails: #1 is retried alone, and the runs built on
 * it stand (#2's passed run is not tested again).
 */
function threeDeep(passedToo: string[] = []) {
  const q = queueDriver({ concurrency: 3 });
  submit(q, 1, 0.3);
  submit(q, 2, 0.02);
  submit(q, 3, 0.02);
  expect(runs(q)).toEqual([
    ['r1', [], [1]],
    ['r2', [1], [2]],
    ['r3', [1, 2], [3]],
  ]);
  for (const runId of ['r2', ...passedToo]) q.send({ type: 'run_finished', runId, passed: true }, 29 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] }, 30 * MINUTE);
  expect(runs(q).slice(3)).toEqual([['r4', [], [1]]]);
  // Before, #1's failure dropped r2 and r3 (built on it) and #2 and #3 were tested again.
  expect(q.state.runs.map((r) => r.id)).toEqual(['r2', 'r3', 'r4']);
  expect(q.state.runs[0]?.status).toBe('passed');
  return q;
}

test("the retry keeps the runs built on the PR: once it passes, the passed run's PRs land without another test", () => {
  const q = threeDeep();
  q.send({ type: 'run_finished', runId: 'r4', passed: true }, 60 * MINUTE);
  const merges = () => q.log.flatMap((a) => (a.type === 'merge' ? [[a.runId, a.entryIds]] : []));
  expect(merges()).toEqual([['r4', ['e1']]]);
  q.send({ type: 'merge_finished', runId: 'r4', ok: true, newBaseSha: 'm-r4' }, 61 * MINUTE);
  expect(merges()).toEqual([
    ['r4', ['e1']],
    ['r2', ['e2']],
  ]);
  expect(started(q)).toHaveLength(4);
});

test('once only: a vouched PR whose retry fails alone too is ejected, and the runs built on it are rebuilt', () => {
  const q = threeDeep();
  q.send({ type: 'run_finished', runId: 'r4', passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  expect(statuses(q, 1).at(-1)).toBe('FAILED:failed_tests');
  expect(runs(q).slice(4)).toEqual([['r5', [], [2, 3]]]);
});

test("a failed batch's blame goes to its PRs no passed run vouched for; a vouched part that fails alone is retried", () => {
  // #2 vouched by r2, #3 not (r3 still running); #1 fails twice and leaves; #2 and #3 are batched.
  const q = threeDeep();
  q.send({ type: 'run_finished', runId: 'r4', passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r5', passed: false, failedChecks: ['ci'] }, 90 * MINUTE);
  // #3 alone could have failed it: P(#3 breaks | the batch failed) = 0.02 / (1 - 0.98). #2 keeps its risk.
  expect(entry(q, 3)?.risk).toBeCloseTo(1, 9);
  expect(entry(q, 2)?.risk).toBe(0.02);
  // Before vouching, a part was ejected at its first lone failure.
  const partOf = (n: number) => started(q).find((r) => prs(r.unit).join() === String(n) && r.isBisection) as EngineRun;
  q.send({ type: 'run_finished', runId: partOf(2).id, passed: false, failedChecks: ['ci'] }, 120 * MINUTE);
  expect(statuses(q, 2)).toContain('TESTING:retried');
  expect(statuses(q, 2)).not.toContain('FAILED:failed_tests');
});

test('a batch of vouched PRs only: the blame is shared as before', () => {
  const q = threeDeep(['r3']);
  q.send({ type: 'run_finished', runId: 'r4', passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  expect(runs(q).slice(4)).toEqual([['r5', [], [2, 3]]]);
  q.send({ type: 'run_finished', runId: 'r5', passed: false, failedChecks: ['ci'] }, 90 * MINUTE);
  expect(entry(q, 2)?.risk).toBeCloseTo(0.02 / (1 - 0.98 * 0.98), 9);
  expect(entry(q, 3)?.risk).toBeCloseTo(0.02 / (1 - 0.98 * 0.98), 9);
});

test('a vouched PR likely to break is retried apart: the run beside it is neither dropped nor started twice', () => {
  // #2 and #3 both vouched; #1 leaves; their batch fails and each is blamed about half: two lone parts, r6 and r7.
  const q = threeDeep(['r3']);
  q.send({ type: 'run_finished', runId: 'r4', passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r5', passed: false, failedChecks: ['ci'] }, 90 * MINUTE);
  expect(entry(q, 2)?.risk).toBeGreaterThanOrEqual(0.4);
  expect(runs(q).slice(5)).toEqual([
    ['r6', [], [2]],
    ['r7', [], [3]],
  ]);
  q.send({ type: 'run_finished', runId: 'r7', passed: true }, 100 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r6', passed: false, failedChecks: ['ci'] }, 110 * MINUTE);
  expect(statuses(q, 2)).toContain('TESTING:retried');
  // Before, #2's failure first kept it in the chain, then its retry left it out: r7 was dropped and tested again.
  expect(runs(q).slice(7)).toEqual([['r8', [], [2]]]);
  expect(q.state.runs.find((r) => r.id === 'r7')?.status).toBe('passed');
});

test('a pass vouches only for the heads it tested, and only with adaptive tuning', () => {
  const q = oneOnTwo();
  // #1's head changed in the same round as the pass (a push and its resubmission, decided together): not vouched.
  const first = q.state.entries.find((e) => e.prNumber === 1);
  if (first?.facts) first.facts = { ...first.facts, headSha: 'h1b' };
  q.send({ type: 'run_finished', runId: 'r2', passed: true }, 29 * MINUTE);
  expect(entry(q, 1)?.vouched).toBeUndefined();
  expect(entry(q, 2)?.vouched).toBe(true);
  const fixed = queueDriver({ concurrency: 2, tuning: 'fixed' });
  submit(fixed, 1, 0.02);
  const run = started(fixed)[0] as EngineRun;
  fixed.send({ type: 'run_finished', runId: run.id, passed: true }, 30 * MINUTE);
  expect(fixed.state.entries.some((e) => e.vouched)).toBe(false);
  expect(fixed.log.some((a) => a.type === 'merge')).toBe(true);
});

test('the branch moved by itself: what passed on the old one vouches for nothing, and a lone failure ejects as before', () => {
  const q = oneOnTwo();
  q.send({ type: 'run_finished', runId: 'r2', passed: true }, 29 * MINUTE);
  expect(entry(q, 1)?.vouched).toBe(true);
  q.send({ type: 'base_moved', sha: 'pushed1' }, 29 * MINUTE);
  expect(q.state.entries.some((e) => e.vouched)).toBe(false);
  // Tested again on the pushed branch as a batch, which fails; #1 is the part likely to break, alone.
  expect(runs(q)[2]).toEqual(['r3', [], [1, 2]]);
  q.send({ type: 'run_finished', runId: 'r3', passed: false, failedChecks: ['ci'] }, 60 * MINUTE);
  // #2's part (the probe adopted) passes; #1's part, built on it, fails.
  expect(runs(q).slice(3)).toEqual([
    ['r4', [], [2]],
    ['r5', [2], [1]],
  ]);
  q.send({ type: 'run_finished', runId: 'r4', passed: true }, 80 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r5', passed: false, failedChecks: ['ci'] }, 90 * MINUTE);
  // Still vouched for, it would be retried (a vouched part is, whatever its risk).
  expect(statuses(q, 1)).not.toContain('TESTING:retried');
  expect(statuses(q, 1).at(-1)).toBe('FAILED:failed_tests');
});

test("the queue's own landings keep the vouches of the PRs still queued (they set the base without moving it by itself)", () => {
  const q = threeDeep();
  expect(entry(q, 3)?.vouched).toBeUndefined();
  q.send({ type: 'run_finished', runId: 'r4', passed: true }, 60 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r4', ok: true, newBaseSha: 'm-r4' }, 61 * MINUTE);
  expect(q.state.baseSha).toBe('m-r4');
  expect(entry(q, 2)?.vouched).toBe(true);
});
