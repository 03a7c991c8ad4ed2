import { decide } from '../../src/engine/decide.js';
import { initialEngineState } from '../../src/engine/initial-state.js';
import type { EngineAction, EngineEvent, EngineState, PrFacts } from '../../src/engine/model.js';
import type { QueueConfig } from '../../src/domain/queue-config.js';

/**
 * A mode change waits for the old mode's runs: running, landing, or passed while the queue is paused (resumed, the
 * passed run lands what it tested, then the mode changes). A passed run that cannot land in a running queue (its
 * landing blocked) does not hold the switch, or the switch could never end.
 */
const facts = (headSha: string): PrFacts => ({ headSha, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable' });

function queue(config: Partial<QueueConfig> = {}) {
  let state: EngineState = initialEngineState('main', { tuning: 'fixed', ...config }, 'base0');
  const log: EngineAction[] = [];
  const send = (event: EngineEvent) => {
    const decision = decide(state, event, 0);
    state = decision.state;
    log.push(...decision.actions);
  };
  return {
    get state() {
      return state;
    },
    send,
    submit: (n: number) => send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`) }),
    /** updateQueue: the settings given, the mode included, with this requested state. */
    update: (change: Partial<QueueConfig>, requestedState: 'RUNNING' | 'PAUSED' | 'DRAINING' = 'RUNNING') =>
      send({ type: 'config_changed', config: { ...state.config, mode: state.switchingToMode ?? state.config.mode, ...change }, requestedState }),
    merges: () => log.filter((a) => a.type === 'merge').length,
  };
}

test('paused during a switch, a passed run holds it; resumed, the run lands and then the mode changes', () => {
  const q = queue();
  q.submit(1);
  q.update({ mode: 'parallel' });
  expect(q.state.switchingToMode).toBe('parallel');
  q.update({}, 'PAUSED');
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  for (let i = 0; i < 3; i++) q.send({ type: 'tick' });
  expect(q.state).toMatchObject({ switchingToMode: 'parallel', config: expect.objectContaining({ mode: 'single' }) });
  expect(q.state.runs.map((r) => [r.id, r.status])).toEqual([['r1', 'passed']]);
  expect(q.merges()).toBe(0);

  q.update({}, 'RUNNING');
  expect(q.merges()).toBe(1);
  expect(q.state.switchingToMode).toBe('parallel');
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'tested-r1' });
  expect(q.state).toMatchObject({ switchingToMode: null, config: expect.objectContaining({ mode: 'parallel' }), entries: [] });
});

test('a passed run whose landing is blocked does not hold a switch in a running queue: the switch ends', () => {
  const q = queue({ concurrency: 2 });
  q.submit(1);
  q.submit(2);
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  q.send({ type: 'merge_finished', runId: 'r1', ok: false, reason: 'blocked', message: 'Protected branch update failed' });
  // The mode change lifts the block (r1 lands again) while r2 runs: switching.
  q.update({ mode: 'parallel' });
  expect(q.state.switchingToMode).toBe('parallel');
  expect(q.merges()).toBe(2);
  q.send({ type: 'merge_finished', runId: 'r1', ok: false, reason: 'blocked', message: 'Protected branch update failed' });
  expect(q.state.switchingToMode).toBe('parallel');
  // r2 ends: only passed runs the blocked landing holds back are left, and they do not hold the switch.
  q.send({ type: 'run_finished', runId: 'r2', passed: true });
  expect(q.state).toMatchObject({ switchingToMode: null, config: expect.objectContaining({ mode: 'parallel' }) });
});

test('a passed run held back by a host outage holds the switch (an outage is not a verdict); it lands, then the mode changes', () => {
  const q = queue();
  q.submit(1);
  q.update({ mode: 'parallel' });
  q.send({ type: 'host_unavailable', message: 'GitHub answered 502', cause: 'actions' });
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  for (let i = 0; i < 3; i++) q.send({ type: 'tick' });
  expect(q.state.switchingToMode).toBe('parallel');
  expect(q.state.runs.map((r) => [r.id, r.status])).toEqual([['r1', 'passed']]);
  expect(q.merges()).toBe(0);

  q.send({ type: 'host_recovered', cause: 'actions' });
  expect(q.merges()).toBe(1);
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'tested-r1' });
  expect(q.state).toMatchObject({ switchingToMode: null, config: expect.objectContaining({ mode: 'parallel' }), entries: [] });
});

test('a pause given with the mode change holds a passed run: judged as the queue stands after the change', () => {
  const q = queue();
  q.submit(1);
  q.update({}, 'PAUSED');
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  q.update({ mode: 'parallel' }, 'PAUSED');
  expect(q.state).toMatchObject({ switchingToMode: 'parallel', config: expect.objectContaining({ mode: 'single' }) });
  expect(q.state.runs.map((r) => [r.id, r.status])).toEqual([['r1', 'passed']]);
});
