/**
 * The push webhook of the queue's own landing names a commit it tested: the
 * writer takes it as the branch's head only while that merge is in flight (or
 * when the base is there already). Delivered late or again, after someone
 * pushed on top, it would move the base back to a commit the branch has left
 * and rebuild the runs on it (found by review): the head is read instead.
 */
import { initialEngineState } from '../../src/engine/initial-state.js';
import type { EngineState } from '../../src/engine/model.js';
import { decideInputs } from '../../src/runner/decide-inputs.js';
import type { InboxItem, RunnerInput } from '../../src/runner/runner-model.js';

const facts = (n: number) => ({ headSha: `h${n}`, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable' as const });
let seq = 0;
const item = (input: RunnerInput, at = 0): InboxItem => ({ id: `i${++seq}`, queueId: 'q', at, input });
const submit = (n: number) => item({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(n) });

/** One PR tested, passed and landed as `tested-r1`; then decided one input at a time, as the writer does. */
function landed(): { state: EngineState; decide: (input: RunnerInput) => ReturnType<typeof decideInputs> } {
  let state = initialEngineState('main', { concurrency: 2, tuning: 'fixed' }, 'base0');
  const decide = (input: RunnerInput) => {
    const decided = decideInputs(state, [item(input)]);
    state = decided.state;
    return decided;
  };
  decideInputs(state, [submit(1)]);
  decide({ type: 'run_finished', runId: 'r1', passed: true });
  decide({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'tested-r1' });
  return { get state() { return state; }, decide };
}

test('late, after a push on top: the base stays where the head read put it, the runs built there stand, the head is read', () => {
  const queue = landed();
  queue.decide({ type: 'base_moved', sha: 'X' }); // someone pushed X on top; the head read said so
  queue.decide(submit(2).input);
  const run = queue.state.runs.find((r) => r.unit.some((h) => h.entryId === 'e2'));
  expect(run?.baseSha).toBe('X');
  const decided = queue.decide({ type: 'landing_pushed', sha: 'tested-r1' });
  expect(queue.state.baseSha).toBe('X');
  expect(decided.actions).toContainEqual({ type: 'read_base_head' });
  expect(decided.actions.filter((a) => a.type === 'cancel_run')).toEqual([]);
  expect(queue.state.runs).toContain(run);
});

test('on time, or again at the base: taken as it is, nothing read', () => {
  const queue = landed();
  const again = queue.decide({ type: 'landing_pushed', sha: 'tested-r1' });
  expect(queue.state.baseSha).toBe('tested-r1');
  expect(again.actions).not.toContainEqual({ type: 'read_base_head' });
  // With a merge in flight, the engine keeps the sha for the merge's outcome.
  queue.decide(submit(2).input);
  const run = queue.state.runs.find((r) => r.unit.some((h) => h.entryId === 'e2'));
  queue.decide({ type: 'run_finished', runId: run?.id as string, passed: true });
  expect(queue.state.mergingRunId).toBe(run?.id);
  const during = queue.decide({ type: 'landing_pushed', sha: 'tested-r2' });
  expect(during.actions).not.toContainEqual({ type: 'read_base_head' });
  expect(queue.state.pendingBaseSha).toBe('tested-r2');
});
