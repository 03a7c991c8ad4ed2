/**
 * A run the host would not build because a PR's head was not the one the queue read (run_not_started with
 * `headChanged`: pushed to since, or the host's list of its commits lags behind). It was built again at once, on the
 * same head, before the read of the PR's facts (asked for with the refusal) came back: refused again, and again, each
 * round a branch built for nothing. Now no run with that PR (nor, in a single queue, behind it) starts until facts read
 * since arrive; then one does, or the push cancels the PR and the queue goes on without it. It keeps its place.
 */
import { decide } from '../../src/engine/decide.js';
import type { EngineRun, EngineState } from '../../src/engine/model.js';
import { facts, MINUTE, prNumbers, queueDriver, runShapes, startedRuns } from './support/queue-driver.js';

type Driver = ReturnType<typeof queueDriver>;
const running = (q: Driver) => q.state.runs.filter((r) => r.status === 'running').map((r) => [r.id, prNumbers(r.ahead), prNumbers(r.unit)]);
const withPr = (runs: EngineRun[], n: number) => runs.filter((r) => [...r.ahead, ...r.unit].some((h) => h.entryId === `e${n}`));

test('a single queue builds nothing with the PR the host did not find, nor behind it, until its facts are read again; the same head confirmed is built then', () => {
  const q = queueDriver({ concurrency: 1 });
  q.submit(1);
  q.submit(2);
  expect(runShapes(q)).toEqual([['r1', [], [1]]]);
  q.send({ type: 'run_not_started', runId: 'r1', headChanged: { entryId: 'e1' } }, MINUTE);
  // Nothing starts: #1's head is in doubt, and #2 would be built on it.
  expect(startedRuns(q)).toHaveLength(1);
  expect(q.state.runs).toEqual([]);
  expect(q.states()).toEqual({ 1: 'PENDING', 2: 'PENDING' });
  // Nor on a later decision (a tick, another PR's submission), before its facts.
  q.send({ type: 'tick' }, 2 * MINUTE);
  q.submit(3, 2 * MINUTE);
  expect(startedRuns(q)).toHaveLength(1);
  // The read says the same head (the host's list had lagged): built again, in its place at the front (with the PRs
  // behind it, batched as adaptive tuning chooses).
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: facts('h1'), merged: false }, 3 * MINUTE);
  expect(runShapes(q).slice(1)).toEqual([['r2', [], [1, 2, 3]]]);
  expect(q.state.entries.find((e) => e.id === 'e1')?.awaitingFacts).toBeUndefined();
});

test('the read finds a push: the PR is cancelled and the PR behind it is built without it', () => {
  const q = queueDriver({ concurrency: 1 });
  q.submit(1);
  q.submit(2);
  q.send({ type: 'run_not_started', runId: 'r1', headChanged: { entryId: 'e1' } }, MINUTE);
  expect(startedRuns(q)).toHaveLength(1);
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: facts('h1-pushed'), merged: false }, 2 * MINUTE);
  expect(q.states()).toEqual({ 2: 'TESTING' });
  expect(runShapes(q).slice(1)).toEqual([['r2', [], [2]]]);
  expect(withPr(startedRuns(q).slice(1), 1)).toEqual([]);
});

test('runs in flight behind it go on; a refusal of one of them for a PR ahead holds that PR, and nothing is built on it', () => {
  const q = queueDriver({ concurrency: 3 });
  [1, 2, 3, 4].forEach((n) => q.submit(n));
  expect(running(q)).toEqual([
    ['r1', [], [1]],
    ['r2', [1], [2]],
    ['r3', [1, 2], [3]],
  ]);
  // r2 was refused for #1's head (r1 had been built before the push): r2 goes, r1 and r3 stay as they are.
  q.send({ type: 'run_not_started', runId: 'r2', headChanged: { entryId: 'e1' } }, MINUTE);
  expect(running(q)).toEqual([
    ['r1', [], [1]],
    ['r3', [1, 2], [3]],
  ]);
  expect(startedRuns(q)).toHaveLength(3);
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: facts('h1'), merged: false }, 2 * MINUTE);
  expect(runShapes(q).slice(3)).toEqual([['r4', [1], [2]]]);
});

test('a late or stale report holds nothing: a run no longer running, or a PR it did not build', () => {
  const q = queueDriver({ concurrency: 1 });
  q.submit(1);
  q.submit(2);
  q.send({ type: 'run_finished', runId: 'r1', passed: true }, MINUTE);
  expect(q.state.mergingRunId).toBe('r1');
  q.send({ type: 'run_not_started', runId: 'r1', headChanged: { entryId: 'e1' } }, 2 * MINUTE);
  expect(q.state.entries.find((e) => e.id === 'e1')?.awaitingFacts).toBeUndefined();
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'base1' }, 3 * MINUTE);
  expect(runShapes(q)).toEqual([
    ['r1', [], [1]],
    ['r2', [1], [2]],
  ]);
  // A PR the run does not hold: the run is built again at once, as a refusal without a culprit is.
  q.send({ type: 'run_not_started', runId: 'r2', headChanged: { entryId: 'e9' } }, 4 * MINUTE);
  expect(runShapes(q).slice(2)).toEqual([['r3', [], [2]]]);
});

test('a parallel queue holds only the lane of the PR in doubt; the other lane goes on', () => {
  const q = queueDriver({ mode: 'parallel', concurrency: 4 });
  const submit = (n: number, targets: string[], at = 0) =>
    q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`), targets: { sha: `h${n}`, targets } }, at);
  submit(1, ['//api']);
  submit(2, ['//web']);
  expect(running(q)).toEqual([
    ['r1', [], [1]],
    ['r2', [], [2]],
  ]);
  q.send({ type: 'run_not_started', runId: 'r1', headChanged: { entryId: 'e1' } }, MINUTE);
  // Another PR of #1's lane would be built on its head: it waits; one of the other lane is built.
  submit(3, ['//api'], 2 * MINUTE);
  submit(4, ['//web'], 2 * MINUTE);
  expect(runShapes(q).slice(2)).toEqual([['r3', [2], [4]]]);
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: facts('h1'), merged: false }, 3 * MINUTE);
  expect(runShapes(q).slice(3)).toEqual([['r4', [], [1, 3]]]);
});

test('a bisection half waits whole for its PR in doubt, not split around it', () => {
  const q = queueDriver({ concurrency: 2, batch: true, batchingMinSize: 4, batchingMaxWaitTimeMinutes: 30, bisectionConcurrency: 2 });
  [1, 2, 3, 4].forEach((n) => q.submit(n));
  q.send({ type: 'run_finished', runId: 'r1', passed: false, failedChecks: ['ci'] }, MINUTE);
  expect(runShapes(q).slice(1)).toEqual([
    ['r2', [], [1, 2]],
    ['r3', [1, 2], [3, 4]],
  ]);
  q.send({ type: 'run_not_started', runId: 'r3', headChanged: { entryId: 'e4' } }, 2 * MINUTE);
  expect(startedRuns(q)).toHaveLength(3);
  q.send({ type: 'pr_facts_changed', prNumber: 4, facts: facts('h4'), merged: false }, 3 * MINUTE);
  expect(runShapes(q).slice(3)).toEqual([['r4', [1, 2], [3, 4]]]);
});

test('a probe the host would not build is not started again on the same head until the PR’s facts are read', () => {
  // #1 and #2 test; four safe PRs and a risky one form a batch once #1 lands; #2 lands and leaves a slot for a probe.
  const q = queueDriver({ concurrency: 2 });
  const submit = (n: number, risk: number, at = 0) => q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`), risk }, at);
  [1, 2].forEach((n) => submit(n, 0.005));
  [3, 4, 5, 6].forEach((n) => submit(n, 0.005, MINUTE));
  submit(7, 0.1, 2 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r1', passed: true }, 30 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'base1' }, 30 * MINUTE);
  q.send({ type: 'run_finished', runId: 'r2', passed: true }, 31 * MINUTE);
  q.send({ type: 'merge_finished', runId: 'r2', ok: true, newBaseSha: 'base2' }, 31 * MINUTE);
  const probe = q.state.probes?.[0] as EngineRun;
  expect(prNumbers(probe.unit)).toEqual([3, 4, 5, 6]);
  const before = startedRuns(q).length;
  q.send({ type: 'run_not_started', runId: probe.id, headChanged: { entryId: 'e4' } }, 32 * MINUTE);
  expect(q.state.probes).toBeUndefined();
  expect(startedRuns(q).slice(before)).toEqual([]);
  q.send({ type: 'pr_facts_changed', prNumber: 4, facts: facts('h4'), merged: false }, 33 * MINUTE);
  expect(startedRuns(q).slice(before).map((r) => [r.probeOf !== undefined, prNumbers(r.unit)])).toEqual([[true, [3, 4, 5, 6]]]);
});

test('the hold is kept in the state as saved: loaded again, it still holds until the facts come', () => {
  const q = queueDriver({ concurrency: 1 });
  q.submit(1);
  q.send({ type: 'run_not_started', runId: 'r1', headChanged: { entryId: 'e1' } }, MINUTE);
  const loaded = JSON.parse(JSON.stringify(q.state)) as EngineState;
  const waited = decide(loaded, { type: 'tick' }, 2 * MINUTE);
  expect(waited.actions.filter((a) => a.type === 'start_run')).toEqual([]);
  const read = decide(waited.state, { type: 'pr_facts_changed', prNumber: 1, facts: facts('h1'), merged: false }, 3 * MINUTE);
  expect(read.actions.filter((a) => a.type === 'start_run').map((a) => a.type === 'start_run' && prNumbers(a.run.unit))).toEqual([[1]]);
});
