/**
 * A restart asked by a comment is carried out once however often its webhook delivery is handled (a delivery is
 * handled again after a failure, and may have got as far as the inbox the first time): the comment's id goes with the
 * request, and the same id again restarts nothing and records nothing. Requests without an id (the API's) restart
 * each time, as before.
 */
import type { EngineEvent } from '../../src/engine/model.js';
import { decideInputs } from '../../src/runner/decide-inputs.js';
import type { RunnerAction } from '../../src/runner/runner-model.js';
import { queueDriver, submitWithRisk } from '../engine/support/queue-driver.js';

/** #1 testing alone (run r1). */
function testing() {
  const q = queueDriver({ concurrency: 1 });
  submitWithRisk(q, 1);
  expect(q.state.runs.map((r) => [r.id, r.status])).toEqual([['r1', 'running']]);
  return structuredClone(q.state);
}

let inputs = 0;
function restart(state: ReturnType<typeof testing>, requestId?: string): string[] {
  const input: Extract<EngineEvent, { type: 'restart_requested' }> = { type: 'restart_requested', entryId: 'e1', ...(requestId ? { requestId } : {}) };
  const { actions } = decideInputs(state, [{ id: `i${++inputs}`, queueId: 'q', input, at: 60_000 * inputs }]);
  return actions.flatMap((a: RunnerAction) => (a.type === 'record_timeline' ? [`timeline ${a.reason}`] : a.type === 'cancel_run' ? [`cancel ${a.runId}`] : a.type === 'start_run' ? [`start ${a.run.id}`] : []));
}

test('the same comment handled twice restarts once; another comment restarts again', () => {
  const state = testing();
  expect(restart(state, 'comment:7')).toEqual(['timeline restart_requested', 'cancel r1', 'start r2']);
  expect(restart(state, 'comment:7')).toEqual([]);
  expect(state.runs.map((r) => [r.id, r.status])).toEqual([['r2', 'running']]);
  expect(restart(state, 'comment:8')).toEqual(['timeline restart_requested', 'cancel r2', 'start r3']);
});

test('a restart without a request id (the API) restarts each time', () => {
  const state = testing();
  expect(restart(state)).toEqual(['timeline restart_requested', 'cancel r1', 'start r2']);
  expect(restart(state)).toEqual(['timeline restart_requested', 'cancel r2', 'start r3']);
});
