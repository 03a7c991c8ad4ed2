/**
 * What the board takes of the engine's state: a copy of the runs in flight (probes too) and the numbers of their
 * PRs, not a copy of the whole queue (found by a cost review: 20 ms of the event loop per board at 10,000 PRs).
 */
import { decide } from '../../src/engine/decide.js';
import { initialEngineState } from '../../src/engine/initial-state.js';
import type { EngineEvent, EngineState } from '../../src/engine/model.js';
import { runsInFlight } from '../../src/runner/runs-in-flight.js';

function queueOf(prs: number, concurrency: number): EngineState {
  let state = initialEngineState('main', { tuning: 'fixed', concurrency }, 'base0');
  for (let n = 1; n <= prs; n++) {
    const event: EngineEvent = { type: 'submitted', entryId: `e${n}`, prNumber: 100 + n, priority: 100, noBatch: false, facts: { headSha: `h${n}`, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable' } };
    state = decide(state, event, 0).state;
  }
  return state;
}

test('the runs in flight with their PRs\' numbers, and only theirs', () => {
  const state = queueOf(6, 2);
  const { runs, prNumbers } = runsInFlight(state);
  expect(runs.map((run) => run.unit.map((head) => head.entryId))).toEqual([['e1'], ['e2']]);
  expect([...prNumbers]).toEqual([
    ['e1', 101],
    ['e2', 102],
  ]);
});

test('a copy: the writer changing its state in place afterwards does not change what the board reads', () => {
  const state = queueOf(2, 2);
  const { runs } = runsInFlight(state);
  state.runs[0]!.status = 'failed';
  state.runs[1]!.unit.push({ entryId: 'e9', headSha: 'h9' });
  expect(runs.map((run) => [run.status, run.unit.length])).toEqual([
    ['running', 1],
    ['running', 1],
  ]);
});
