/**
 * The writer decides a round's inputs together: one pass over the queue for
 * the lot. Each keeps its own time; an input that cannot be applied is named
 * (set aside by the runner); a failure while the queue settles names none, and
 * deciding the same inputs one by one then does.
 */
import { initialEngineState } from '../../src/engine/initial-state.js';
import type { EngineState } from '../../src/engine/model.js';
import { decideInputs, PoisonInput, SettleFailed } from '../../src/runner/decide-inputs.js';
import type { InboxItem } from '../../src/runner/runner-model.js';

const facts = (n: number) => ({ headSha: `h${n}`, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable' as const });
const submit = (n: number, at: number): InboxItem => ({
  id: `i${n}`,
  queueId: 'q',
  at,
  input: { type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(n) },
});

test('submits decided together keep their own times, and the queue is settled once for all of them', () => {
  const state = initialEngineState('main', { concurrency: 2 }, 'base0');
  const { actions, state: after } = decideInputs(state, [submit(1, 1_000), submit(2, 2_000), submit(3, 3_000)]);
  expect(after.entries.map((e) => e.submittedAt)).toEqual([1_000, 2_000, 3_000]);
  // Settled once: runs are started for the three as the queue sees them all, none started and dropped again,
  // and each admission published once.
  expect(actions.filter((a) => a.type === 'cancel_run')).toHaveLength(0);
  // Runs of the queue proper: an idle slot may also test a part of the batch ahead of time (a probe, engine/probes.ts).
  const tested = actions.flatMap((a) => (a.type === 'start_run' && !a.run.probeOf ? a.run.unit.map((h) => h.entryId) : []));
  expect(tested).toEqual(['e1', 'e2', 'e3'].slice(0, tested.length));
  expect(tested.length).toBeGreaterThan(0);
  const admitted = actions.flatMap((a) => (a.type === 'publish_status' && a.state === 'PENDING' ? [a.entryId] : []));
  expect(admitted).toEqual(['e1', 'e2', 'e3']);
  expect(after.runs.every((run) => run.startedAt === 3_000)).toBe(true);
});

test('an input that cannot be applied is named, together or one by one', () => {
  // A run stored without its unit: a report of a conflict in it cannot be applied.
  const broken = (): EngineState => {
    const state = initialEngineState('main', { concurrency: 1 }, 'base0');
    const run = { id: 'r9', seq: 9, status: 'running', unit: null, ahead: [], baseSha: 'base0', startedAt: 0, finishedAt: null, failedChecks: [], failureReason: null, isBisection: false };
    return { ...state, runs: [run as unknown as EngineState['runs'][number]] };
  };
  const bad: InboxItem = { id: 'bad', queueId: 'q', at: 5, input: { type: 'run_finished', runId: 'r9', passed: false, conflictEntryId: 'e1' } };
  for (const together of [true, false]) {
    let thrown: unknown = null;
    try {
      decideInputs(broken(), [bad, submit(1, 1)], together);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PoisonInput);
    expect((thrown as PoisonInput).item.id).toBe('bad');
  }
});

test('a failure while the queue settles names no input together; one by one names the input that caused it', () => {
  // A queue without settings: an input applies (a tick changes nothing), settling it throws.
  const unsettled = (): EngineState => ({ ...initialEngineState('main', { concurrency: 1 }, 'base0'), config: undefined as unknown as EngineState['config'] });
  const tick: InboxItem = { id: 't', queueId: 'q', at: 1, input: { type: 'tick' } };
  expect(() => decideInputs(unsettled(), [tick], true)).toThrow(SettleFailed);
  expect(() => decideInputs(unsettled(), [tick], false)).toThrow(PoisonInput);
});

test('what an input records sees the entries added or ended by the inputs before it in the round, as one by one would', () => {
  const priority: InboxItem = { id: 'p', queueId: 'q', at: 2, input: { type: 'priority_changed', entryId: 'e1', priority: 0, noBatch: false } };
  const cancel: InboxItem = { id: 'c', queueId: 'q', at: 3, input: { type: 'cancel_requested', entryId: 'e2', prNumber: 2 } };
  const records = (together: boolean) => {
    const state = initialEngineState('main', { concurrency: 1 }, 'base0');
    const { actions } = decideInputs(state, [submit(1, 1), priority, submit(2, 2), cancel], together);
    return {
      priorities: actions.filter((a) => a.type === 'record_priority').map((a) => (a.type === 'record_priority' ? [a.entryId, a.priority] : [])),
      cancelled: actions.filter((a) => a.type === 'publish_status' && a.state === 'CANCELLED').map((a) => (a.type === 'publish_status' ? a.entryId : '')),
    };
  };
  // The priority of a PR submitted earlier in the round is recorded; its cancel is published once, by the engine.
  expect(records(true)).toEqual({ priorities: [['e1', 0]], cancelled: ['e2'] });
  expect(records(true)).toEqual(records(false));
});

test('a PR asked to be read again by many inputs of one round is read once (found by review: a CI\'s every check event read it)', () => {
  const state = initialEngineState('main', { concurrency: 1 }, 'base0');
  const refresh = (i: number, prNumber: number): InboxItem => ({ id: `r${i}`, queueId: 'q', at: 1_000 + i, input: { type: 'refresh_pull_request', prNumber } });
  const { actions } = decideInputs(state, [refresh(1, 7), refresh(2, 8), refresh(3, 7), refresh(4, 7), refresh(5, 8)]);
  expect(actions.filter((a) => a.type === 'refresh_pull_request')).toEqual([
    { type: 'refresh_pull_request', prNumber: 7 },
    { type: 'refresh_pull_request', prNumber: 8 },
  ]);
});
