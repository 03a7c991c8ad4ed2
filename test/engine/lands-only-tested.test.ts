/**
 * A parallel queue on a branch that takes only tested commits (protection requiring checks the App may not bypass):
 * learned from the first landing refused as untested, a lane's landing rebuilds at once the other lanes' runs built on
 * the head before, instead of each passing, being refused and rebuilt a whole CI run later (found by review).
 * Forgotten at any change of the queue.
 */
import type { EngineRun } from '../../src/engine/model.js';
import { facts, queueDriver } from './support/queue-driver.js';

function lanes() {
  const q = queueDriver({ mode: 'parallel', concurrency: 3, tuning: 'fixed' });
  const submit = (n: number, targets: string[]) =>
    q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`), targets: { sha: `h${n}`, targets } });
  const runFor = (n: number): EngineRun | undefined => q.state.runs.find((r) => r.unit.some((u) => u.entryId === `e${n}`));
  return Object.assign(q, { submitWith: submit, runFor });
}

test("once the branch refused an untested landing, a lane's landing rebuilds the other lanes' runs at once", () => {
  const q = lanes();
  q.submitWith(1, ['//api']);
  q.submitWith(2, ['//web']);
  q.submitWith(3, ['//docs']);
  q.send({ type: 'run_finished', runId: q.runFor(1)!.id, passed: true });
  q.send({ type: 'merge_finished', runId: q.runFor(1)!.id, ok: true, newBaseSha: 'b1' });
  // Lanes do not wait for each other: #2 and #3 keep their runs on base0 (GitHub may take them put together on b1).
  expect([q.runFor(2)?.baseSha, q.runFor(3)?.baseSha]).toEqual(['base0', 'base0']);
  // #2 passes; the host would not take it untested on b1.
  const second = q.runFor(2)!.id;
  q.send({ type: 'run_finished', runId: second, passed: true });
  q.send({ type: 'merge_finished', runId: second, ok: false, reason: 'base_moved', onlyTested: true });
  q.send({ type: 'base_moved', sha: 'b1' });
  expect(q.state.landsOnlyTested).toBe(true);
  // Both are tested again on b1 now: #3's run on base0 could never land either.
  expect([q.runFor(2)?.baseSha, q.runFor(3)?.baseSha]).toEqual(['b1', 'b1']);
  // #2 lands on b1: #3's run, built on b1 before it, is rebuilt at once on b2.
  const rebuilt = q.runFor(3)!.id;
  q.send({ type: 'run_finished', runId: q.runFor(2)!.id, passed: true });
  q.send({ type: 'merge_finished', runId: q.runFor(2)!.id, ok: true, newBaseSha: 'b2' });
  expect(q.runFor(3)).toMatchObject({ baseSha: 'b2' });
  expect(q.runFor(3)?.id).not.toBe(rebuilt);
  // An operator's change (say, the App now bypasses the checks) forgets it: lanes land independently again.
  q.send({ type: 'config_changed', config: q.state.config, requestedState: 'RUNNING' });
  expect(q.state.landsOnlyTested).toBeUndefined();
});

test('a lane run built on top of the lane\'s landed run stays valid on a branch that takes only tested commits', () => {
  const q = lanes();
  Object.assign(q.state, { landsOnlyTested: true }); // learned before (as in the test above)
  q.submitWith(1, ['//api']);
  q.submitWith(2, ['//api']);
  const behind = q.runFor(2)!;
  expect(behind.ahead.map((h) => h.entryId)).toEqual(['e1']);
  q.send({ type: 'run_finished', runId: q.runFor(1)!.id, passed: true });
  q.send({ type: 'merge_finished', runId: q.runFor(1)!.id, ok: true, newBaseSha: 'b1' });
  expect(q.runFor(2)?.id).toBe(behind.id);
});
