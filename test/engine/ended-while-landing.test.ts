import type { EngineAction } from '../../src/engine/model.js';
import { facts, queueDriver } from './support/queue-driver.js';

/**
 * A PR ended while its landing is being carried out (a cancel, a push, a close): the merge cannot be taken back, so
 * its outcome decides. Found by review: the PR was concluded CANCELLED at once, then landed, and the queue's last
 * word on a merged PR was CANCELLED.
 */
/** The PR's conclusions (MERGED, FAILED, CANCELLED) the engine published. */
const statusesOf = (log: EngineAction[], pr: number) =>
  log.filter(
    (a): a is Extract<EngineAction, { type: 'publish_status' }> => a.type === 'publish_status' && a.prNumber === pr && ['MERGED', 'FAILED', 'CANCELLED'].includes(a.state),
  );
const merges = (log: EngineAction[]) => log.filter((a) => a.type === 'merge');

function landingAsked() {
  const q = queueDriver({ tuning: 'fixed' });
  q.submit(1);
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  expect(merges(q.log)).toHaveLength(1);
  return q;
}

test('cancelled while its merge is carried out, and it lands: MERGED, never CANCELLED', () => {
  const q = landingAsked();
  q.send({ type: 'cancelled', entryId: 'e1' });
  expect(statusesOf(q.log, 1)).toEqual([]); // no conclusion yet: the landing decides
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'tested-r1' });
  expect(statusesOf(q.log, 1).map((s) => s.state)).toEqual(['MERGED']);
  expect(q.state.entries).toEqual([]);
});

test('cancelled while its merge is carried out, and it does not land: CANCELLED then, as asked, and not tested again', () => {
  const q = landingAsked();
  q.send({ type: 'cancelled', entryId: 'e1' });
  q.send({ type: 'merge_finished', runId: 'r1', ok: false, reason: 'base_moved' });
  expect(statusesOf(q.log, 1).map((s) => [s.state, s.reason])).toEqual([['CANCELLED', 'user_requested']]);
  expect(q.state.entries).toEqual([]);
  expect(q.state.runs).toEqual([]);
});

test('pushed to while its merge is carried out, refused for it: cancelled as pushed_to', () => {
  const q = landingAsked();
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: facts('h1-pushed'), merged: false });
  q.send({ type: 'merge_finished', runId: 'r1', ok: false, reason: 'head_changed' });
  expect(statusesOf(q.log, 1).map((s) => [s.state, s.reason])).toEqual([['CANCELLED', 'pushed_to']]);
});

// Found by review: with merge commits GitHub leaves such a PR open (its new head is not in the branch) and nobody
// said the pushed commits did not land.
test('pushed to while its merge is carried out, and it lands: MERGED, saying the commits pushed since did not land', () => {
  const q = landingAsked();
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: facts('h1-pushed'), merged: false });
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'tested-r1' });
  const [merged] = statusesOf(q.log, 1);
  expect([merged?.state, merged?.reason]).toEqual(['MERGED', 'merged']);
  expect(merged?.detail).toMatch(/commits pushed to the pull request while it landed did not/);
});

test('cancelled while its merge is carried out, and it lands: MERGED with nothing more to say', () => {
  const q = landingAsked();
  q.send({ type: 'cancelled', entryId: 'e1' });
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'tested-r1' });
  expect(statusesOf(q.log, 1)[0]?.detail).toBeUndefined();
});

test('a PR ahead in the landing run, cancelled meanwhile, lands with it', () => {
  const q = queueDriver({ tuning: 'fixed', concurrency: 2 });
  q.submit(1);
  q.submit(2); // tested on top of #1
  q.send({ type: 'run_finished', runId: 'r2', passed: true });
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  const landing = merges(q.log).at(-1) as Extract<EngineAction, { type: 'merge' }>;
  q.send({ type: 'cancelled', entryId: 'e1' });
  q.send({ type: 'merge_finished', runId: landing.runId, ok: true, newBaseSha: `tested-${landing.runId}` });
  q.send({ type: 'merge_finished', runId: 'r2', ok: true, newBaseSha: 'tested-r2' });
  expect(statusesOf(q.log, 1).map((s) => s.state)).toEqual(['MERGED']);
  expect(statusesOf(q.log, 2).map((s) => s.state)).toEqual(['MERGED']);
});

// Found by review: GitHub marks the PR merged as the landing moves the branch, and its `closed` webhook can be read
// before the landing's answer is recorded.
test('read as merged while its own landing is carried out: MERGED by the queue, with its run, once the landing answers', () => {
  const q = landingAsked();
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: { ...facts('h1'), open: false }, merged: true });
  expect(statusesOf(q.log, 1)).toEqual([]);
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'tested-r1' });
  expect(statusesOf(q.log, 1).map((s) => [s.state, s.reason, s.runId])).toEqual([['MERGED', 'merged', 'r1']]);
});

test('read as merged while a landing that then fails is carried out: merged outside the queue', () => {
  const q = landingAsked();
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: { ...facts('h1'), open: false }, merged: true });
  q.send({ type: 'merge_finished', runId: 'r1', ok: false, reason: 'pr_closed' });
  expect(statusesOf(q.log, 1).map((s) => [s.state, s.reason])).toEqual([['MERGED', 'merged_outside_queue']]);
  expect(q.state.entries).toEqual([]);
});

// Found by review: the run stayed with its PR gone; and the refusal still blocks (the next landing would be refused too).
test('merged outside the queue while a landing that is then blocked is carried out: the run is dropped, the block kept', () => {
  const q = queueDriver({ tuning: 'fixed', concurrency: 2 });
  q.submit(1);
  q.submit(2);
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: { ...facts('h1'), open: false }, merged: true });
  q.send({ type: 'merge_finished', runId: 'r1', ok: false, reason: 'blocked', message: 'refused' });
  expect(statusesOf(q.log, 1).map((s) => [s.state, s.reason])).toEqual([['MERGED', 'merged_outside_queue']]);
  expect(q.state.runs.map((r) => r.id)).not.toContain('r1');
  expect(q.state.landingBlocked).toMatchObject({ kind: 'land', message: 'refused', tries: 0 });
  // #2 (tested on top of #1) is not built again until the block's try.
  expect(q.state.runs.filter((r) => r.status === 'running')).toEqual([]);
});
