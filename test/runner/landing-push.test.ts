/**
 * The push webhook of the queue's own landing names a commit it tested: the
 * engine takes it as the branch's head only as the result of the merge in
 * flight. Delivered late or again, after someone pushed on top, it would move
 * the base back to a commit the branch has left and rebuild the runs on it
 * (found by review): the head is read instead. Decided alone or with other
 * inputs, live or replayed from the log, the same.
 */
import { initialEngineState } from '../../src/engine/initial-state.js';
import type { EngineState } from '../../src/engine/model.js';
import type { StoredDecision } from '../../src/ports/engine-store.js';
import { decideInputs, loadState } from '../../src/runner/decide-inputs.js';
import type { InboxItem, RunnerInput } from '../../src/runner/runner-model.js';

const facts = (n: number) => ({ headSha: `h${n}`, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable' as const });
let seq = 0;
const item = (input: RunnerInput, at = 0): InboxItem => ({ id: `i${++seq}`, queueId: 'q', at, input });
const submit = (n: number): RunnerInput => ({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(n) });
const initial = () => initialEngineState('main', { concurrency: 2, tuning: 'fixed' }, 'base0');

/** A writer deciding rounds of inputs and keeping its log, as the runner does. */
function writer() {
  const state: EngineState = initial();
  const log: StoredDecision[] = [];
  const decide = (...inputs: RunnerInput[]) => {
    const items = inputs.map((input) => item(input));
    const decided = decideInputs(state, items);
    log.push({ queueId: 'q', version: log.length + 1, epoch: 1, items, actions: decided.actions, together: true });
    return decided;
  };
  return { state, log, decide };
}

/** PR 1 tested, passed and landed as tested-r1; then someone pushed X on top, and the head read said so. */
function landedThenPushedOver() {
  const w = writer();
  w.decide(submit(1));
  w.decide({ type: 'run_finished', runId: 'r1', passed: true });
  w.decide({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'tested-r1' });
  w.decide({ type: 'base_moved', sha: 'X' });
  return w;
}

const runOf = (state: EngineState, entryId: string) => state.runs.find((r) => r.unit.some((h) => h.entryId === entryId));

test('late, after a push on top: the base stays, the runs built there stand, the head is read, and its answer lets the queue go on', () => {
  const w = landedThenPushedOver();
  w.decide(submit(2));
  const run = runOf(w.state, 'e2');
  expect(run?.baseSha).toBe('X');
  const decided = w.decide({ type: 'base_moved', sha: 'tested-r1', landing: true });
  expect(w.state.baseSha).toBe('X');
  expect(decided.actions).toContainEqual({ type: 'read_base_head' });
  expect(decided.actions.filter((a) => a.type === 'cancel_run')).toEqual([]);
  expect(w.state.runs).toContain(run);
  expect(w.state.awaitingBaseHead).toBe(true);
  // The read answers X: nothing moves, and the queue no longer waits.
  w.decide({ type: 'base_moved', sha: 'X' });
  expect(w.state.awaitingBaseHead).toBe(false);
  expect(w.state.runs).toContain(run);
});

test('decided together with other inputs (the writer\'s way), the same', () => {
  const w = landedThenPushedOver();
  const decided = w.decide(submit(2), { type: 'base_moved', sha: 'tested-r1', landing: true });
  expect(w.state.baseSha).toBe('X');
  expect(decided.actions).toContainEqual({ type: 'read_base_head' });
  expect(decided.actions.filter((a) => a.type === 'cancel_run')).toEqual([]);
});

test('replayed from the log (a restart, a takeover), the state is the one decided live', () => {
  const w = landedThenPushedOver();
  w.decide(submit(2));
  w.decide({ type: 'base_moved', sha: 'tested-r1', landing: true });
  const replayed = loadState({ version: 0, state: initial() }, w.log);
  expect(replayed.baseSha).toBe('X');
  expect(replayed).toEqual(w.state);
});

test('an earlier landing\'s push, late, while another merge is in flight: that merge\'s result stands, and the head is read', () => {
  const w = landedThenPushedOver();
  w.decide(submit(2));
  const run = runOf(w.state, 'e2');
  w.decide({ type: 'run_finished', runId: run?.id as string, passed: true });
  expect(w.state.mergingRunId).toBe(run?.id);
  w.decide({ type: 'base_moved', sha: 'tested-r1', landing: true });
  const finished = w.decide({ type: 'merge_finished', runId: run?.id as string, ok: true, newBaseSha: 'tested-r2' });
  expect(w.state.baseSha).toBe('tested-r2');
  expect(finished.actions).toContainEqual({ type: 'read_base_head' });
});

test('on time (during its merge), or again at the base: taken as it is, nothing read', () => {
  const w = landedThenPushedOver();
  const again = w.decide({ type: 'base_moved', sha: 'X', landing: true });
  expect(again.actions).not.toContainEqual({ type: 'read_base_head' });
  w.decide(submit(2));
  const run = runOf(w.state, 'e2');
  w.decide({ type: 'run_finished', runId: run?.id as string, passed: true });
  w.decide({ type: 'base_moved', sha: 'tested-r2', landing: true });
  expect(w.state.pendingBaseSha).toBe('tested-r2');
  const finished = w.decide({ type: 'merge_finished', runId: run?.id as string, ok: true, newBaseSha: 'tested-r2' });
  expect(w.state.baseSha).toBe('tested-r2');
  expect(w.state.awaitingBaseHead).not.toBe(true);
  expect(finished.actions).not.toContainEqual({ type: 'read_base_head' });
});
