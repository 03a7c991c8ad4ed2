import { initialEngineState } from '../../src/engine/initial-state.js';
import type { EngineState, PrFacts } from '../../src/engine/model.js';
import { decideInputs } from '../../src/runner/decide-inputs.js';
import type { RunnerInput } from '../../src/runner/runner-model.js';

/**
 * A forced push of the target branch (a rollback by hand) reported while a landing is in flight (found by review): the
 * read it asks for may be answered before the landing's outcome, so it is only pending then. The queue must read the
 * head again once the merge is decided and believe that read, not wait for good for a read nobody asked for.
 */
const facts = (headSha: string): PrFacts => ({ headSha, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable' });
let seq = 0;

function step(state: EngineState, input: RunnerInput): string[] {
  return decideInputs(state, [{ id: `i${++seq}`, queueId: 'q', input, at: seq }]).actions.map((a) => a.type);
}

function landed(state: EngineState, n: number, newBaseSha: string): void {
  step(state, { type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`) });
  const runId = state.runs.find((r) => r.unit.some((h) => h.entryId === `e${n}`))!.id;
  step(state, { type: 'run_finished', runId, passed: true });
  expect(state.mergingRunId).toBe(runId);
  step(state, { type: 'merge_finished', runId, ok: true, newBaseSha });
}

test('a forced push during a landing that succeeds: the head is read again after it, believed, and the queue goes on from it', () => {
  const state = initialEngineState('main', { tuning: 'fixed' }, 'W');
  landed(state, 1, 'X');
  step(state, { type: 'submitted', entryId: 'e2', prNumber: 2, priority: 100, noBatch: false, facts: facts('h2') });
  const runId = state.runs[0]!.id;
  step(state, { type: 'run_finished', runId, passed: true });
  // Someone resets main to W while #2's landing is carried out; the read the forced push asks for answers first.
  expect(step(state, { type: 'base_head_changed', rewound: true })).toContain('read_base_head');
  step(state, { type: 'base_moved', sha: 'W' });
  // The landing went through (the reset came after the fast-forward): the queue reads the head once more.
  expect(step(state, { type: 'merge_finished', runId, ok: true, newBaseSha: 'T' })).toContain('read_base_head');
  expect(state.awaitingBaseHead).toBe(true);
  // That read is believed, though W is a head the queue's own landing replaced.
  step(state, { type: 'base_moved', sha: 'W' });
  expect(state.baseSha).toBe('W');
  expect(state.awaitingBaseHead).toBe(false);
  expect(state.baseHeadDisputed).toBeUndefined();
  // And the queue goes on: a new PR is tested on W.
  expect(step(state, { type: 'submitted', entryId: 'e3', prNumber: 3, priority: 100, noBatch: false, facts: facts('h3') })).toContain('start_run');
  expect(state.runs).toEqual([expect.objectContaining({ baseSha: 'W' })]);
});

test('a refusal as base_moved with a head read during the merge: the queue still waits for the read after the refusal and believes it', () => {
  const state = initialEngineState('main', { concurrency: 2, tuning: 'fixed' }, 'W');
  landed(state, 1, 'X');
  step(state, { type: 'submitted', entryId: 'e2', prNumber: 2, priority: 100, noBatch: false, facts: facts('h2') });
  const runId = state.runs[0]!.id;
  step(state, { type: 'run_finished', runId, passed: true });
  step(state, { type: 'base_moved', sha: 'X' }); // a read while the merge is in flight: pending
  expect(step(state, { type: 'merge_finished', runId, ok: false, reason: 'base_moved' })).toContain('read_base_head');
  // Nothing starts on the head read before the refusal; the read after it is believed (a reset to W).
  expect(state.awaitingBaseHead).toBe(true);
  expect(state.runs.filter((r) => r.status === 'running')).toEqual([]);
  step(state, { type: 'base_moved', sha: 'W' });
  expect(state.baseSha).toBe('W');
  expect(state.runs).toEqual([expect.objectContaining({ baseSha: 'W' })]);
});
