import { decide } from '../../src/engine/decide.js';
import { initialEngineState } from '../../src/engine/initial-state.js';
import type { EngineAction, EngineEvent, EngineState, PrFacts } from '../../src/engine/model.js';
import type { QueueConfig } from '../../src/domain/queue-config.js';
import { LANDING_RETRY_FIRST_MS, LANDING_RETRY_MAX_MS } from '../../src/engine/landing-block.js';

/**
 * What the engine does with the host's answers to a merge (issue 9): a refused
 * PR fails alone with the host's message, a blocked landing stops merging until
 * an operator changes the queue (never a rebuild loop), and the branch head
 * reported while our own merge is in flight never throws the runs behind away.
 */
const facts = (headSha: string): PrFacts => ({ headSha, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable' });

function queue(config: Partial<QueueConfig> = {}) {
  let state: EngineState = initialEngineState('main', { tuning: 'fixed', ...config }, 'base0'); // one PR per run unless a scenario batches (adaptive tuning: adaptive-tuning.test.ts)
  const log: EngineAction[] = [];
  let now = 0;
  const send = (event: EngineEvent, at = now) => {
    now = at;
    const decision = decide(state, event, now);
    state = decision.state;
    log.push(...decision.actions);
    return decision.actions;
  };
  return {
    get state() {
      return state;
    },
    send,
    wakeAt: () => log.filter((a): a is Extract<EngineAction, { type: 'wake_at' }> => a.type === 'wake_at').at(-1)?.at,
    submit: (n: number) => send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`) }),
    states: () => Object.fromEntries(state.entries.map((e) => [e.prNumber, e.state])),
    starts: () => log.filter((a) => a.type === 'start_run').length,
    merges: () => log.filter((a): a is Extract<EngineAction, { type: 'merge' }> => a.type === 'merge'),
    statuses: (pr: number) => log.filter((a): a is Extract<EngineAction, { type: 'publish_status' }> => a.type === 'publish_status' && a.prNumber === pr),
  };
}

test('a PR the host refuses to land fails alone, with the host\'s message; the PR behind it is rebuilt without it', () => {
  const q = queue({ concurrency: 2 });
  q.submit(1);
  q.submit(2);
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  expect(q.merges()).toHaveLength(1);
  q.send({ type: 'merge_finished', runId: 'r1', ok: false, reason: 'refused', entryId: 'e1', message: 'Merge method squash is not allowed' });
  expect(q.states()).toEqual({ 2: 'TESTING' });
  expect(q.statuses(1).at(-1)).toMatchObject({ state: 'FAILED', reason: 'merge_refused', detail: 'Merge method squash is not allowed' });
  // #2's run had #1 ahead of it: rebuilt on the base alone.
  expect(q.state.runs).toEqual([expect.objectContaining({ ahead: [], unit: [expect.objectContaining({ entryId: 'e2' })] })]);
});

test('a blocked landing stops merging (no rebuild loop) until an operator changes the queue or its try comes', () => {
  const q = queue();
  q.submit(1);
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  q.send({ type: 'merge_finished', runId: 'r1', ok: false, reason: 'blocked', message: 'Protected branch update failed' });
  expect(q.state.landingBlocked).toEqual({ since: 0, message: 'Protected branch update failed', kind: 'land', tries: 0, retryAt: LANDING_RETRY_FIRST_MS, refusedRunId: 'r1' });
  // The PR keeps its place and its passed run; nothing is rebuilt and nothing merges.
  for (let i = 0; i < 5; i++) q.send({ type: 'tick' });
  expect(q.merges()).toHaveLength(1);
  expect(q.starts()).toBe(1);
  expect(q.states()).toEqual({ 1: 'TESTS_PASSED' });
  // updateQueue (any change, here a resume) lifts it: the passed run merges without another test.
  q.send({ type: 'config_changed', config: q.state.config, requestedState: 'RUNNING' });
  expect(q.state.landingBlocked).toBeNull();
  expect(q.merges()).toHaveLength(2);
  expect(q.starts()).toBe(1);
});

test('a blocked landing is tried again by the queue itself, backing off from a minute to half an hour; the run refused twice is built again once; lifted once it lands', () => {
  const q = queue({ concurrency: 3 });
  [1, 2, 3].forEach((n) => q.submit(n));
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  const refuse = (at: number) => q.send({ type: 'merge_finished', runId: q.merges().at(-1)!.runId, ok: false, reason: 'blocked', message: 'Reference update failed' }, at);
  refuse(0);
  // The runner is woken for the try; before it nothing lands.
  expect(q.wakeAt()).toBe(LANDING_RETRY_FIRST_MS);
  q.send({ type: 'tick' }, LANDING_RETRY_FIRST_MS - 1);
  expect(q.merges()).toHaveLength(1);
  // The first try lands the passed run again, and starts nothing beside it.
  const started = q.starts();
  q.send({ type: 'tick' }, LANDING_RETRY_FIRST_MS);
  expect(q.merges().map((m) => m.runId)).toEqual(['r1', 'r1']);
  expect(q.starts()).toBe(started);
  // Refused again: r1's own commit may be what is refused, so it is built again, at the next try, one run alone.
  refuse(LANDING_RETRY_FIRST_MS + 1_000);
  expect(q.state.runs.map((r) => r.id)).not.toContain('r1');
  expect(q.state.landingBlocked).toMatchObject({ since: 0, tries: 1, retryAt: LANDING_RETRY_FIRST_MS + 1_000 + 2 * LANDING_RETRY_FIRST_MS, rebuiltOnce: true });
  let at = q.state.landingBlocked!.retryAt!;
  q.send({ type: 'tick' }, at);
  expect(q.starts()).toBe(started + 1);
  const rebuilt = q.state.runs.filter((r) => r.status === 'running' && r.seq >= q.state.landingBlocked!.retrying!.fromRunSeq);
  expect(rebuilt.map((r) => r.unit.map((h) => h.entryId))).toEqual([['e1']]);
  q.send({ type: 'run_finished', runId: rebuilt[0]!.id, passed: true }, at + 10_000);
  expect(q.merges().at(-1)?.runId).toBe(rebuilt[0]!.id);
  // Its landing refused at every try from now on: never built again, the waits double up to the cap.
  const waits: number[] = [];
  for (let i = 0; i < 6; i++) {
    if (i > 0) {
      const merges = q.merges().length;
      q.send({ type: 'tick' }, at);
      expect(q.merges()).toHaveLength(merges + 1);
    }
    refuse(at + 20_000);
    const next = q.state.landingBlocked!.retryAt!;
    waits.push((next - at - 20_000) / LANDING_RETRY_FIRST_MS);
    at = next;
  }
  expect(waits).toEqual([4, 8, 16, LANDING_RETRY_MAX_MS / LANDING_RETRY_FIRST_MS, 30, 30]);
  expect(q.state.landingBlocked).toMatchObject({ since: 0, tries: 7 });
  expect(q.starts()).toBe(started + 1);
  // The glitch is over: the passed run lands at the next try, and the block is gone.
  q.send({ type: 'tick' }, at);
  q.send({ type: 'merge_finished', runId: q.merges().at(-1)!.runId, ok: true, newBaseSha: 'tested' }, at + 1_000);
  expect(q.state.landingBlocked).toBeNull();
  expect(q.states()[1]).toBeUndefined();
});

test('a try of a block on building runs: a run built during the try that reports lifts it, one refused again keeps it', () => {
  const q = queue({ concurrency: 2 });
  [1, 2].forEach((n) => q.submit(n));
  q.send({ type: 'landing_impossible', runId: 'r1', message: 'the App may not push mq/*' });
  // Both runs in flight refused alike: one refusal of the host, not two tries (found by review: it doubled the wait).
  q.send({ type: 'landing_impossible', runId: 'r2', message: 'the App may not push mq/*' });
  expect(q.state.landingBlocked).toMatchObject({ tries: 0, retryAt: LANDING_RETRY_FIRST_MS });
  // A late refusal of a run gone long ago changes nothing.
  q.send({ type: 'landing_impossible', runId: 'r1', message: 'late' });
  expect(q.state.landingBlocked).toMatchObject({ tries: 0, message: 'the App may not push mq/*' });
  const started = q.starts();
  q.send({ type: 'tick' }, LANDING_RETRY_FIRST_MS);
  expect(q.starts()).toBe(started + 1);
  const tried = q.state.runs.find((r) => r.status === 'running')!;
  q.send({ type: 'landing_impossible', runId: tried.id, message: 'the App may not push mq/*' }, LANDING_RETRY_FIRST_MS + 1_000);
  expect(q.state.landingBlocked).toMatchObject({ since: 0, tries: 1, retryAt: LANDING_RETRY_FIRST_MS + 1_000 + 2 * LANDING_RETRY_FIRST_MS });
  expect(q.states()[1]).toBe('PENDING');
  // Allowed now: the next try's run is built and reports, so the queue is no longer blocked; then both start.
  q.send({ type: 'tick' }, LANDING_RETRY_FIRST_MS * 4);
  const built = q.state.runs.filter((r) => r.status === 'running');
  expect(built).toHaveLength(1);
  q.send({ type: 'run_finished', runId: built[0]!.id, passed: false, failedChecks: ['ci'] }, LANDING_RETRY_FIRST_MS * 5);
  expect(q.state.landingBlocked).toBeNull();
  expect(q.states()).toEqual({ 2: 'TESTING' });
});

// Found by review: a build refused for a moment during a try turned the landing block into a build block, which the
// next run reported lifted; landing was refused again and the block began anew.
test('a landing block stays one through a build refused during a try: only a landing lifts it', () => {
  const q = queue({ concurrency: 2 });
  [1, 2].forEach((n) => q.submit(n));
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  q.send({ type: 'merge_finished', runId: 'r1', ok: false, reason: 'blocked', message: 'refused' });
  // The try lands r1 again: refused, so r1 is built again once; the next try builds it, and that build is refused.
  q.send({ type: 'tick' }, LANDING_RETRY_FIRST_MS);
  q.send({ type: 'merge_finished', runId: 'r1', ok: false, reason: 'blocked', message: 'refused' }, LANDING_RETRY_FIRST_MS);
  let at = q.state.landingBlocked!.retryAt!;
  q.send({ type: 'tick' }, at);
  const built = q.state.runs.find((r) => r.status === 'running' && r.seq >= q.state.landingBlocked!.retrying!.fromRunSeq)!;
  q.send({ type: 'landing_impossible', runId: built.id, message: 'Reference update failed' }, at);
  expect(q.state.landingBlocked).toMatchObject({ kind: 'land', since: 0, tries: 2 });
  // The next try's run is built and reports: the landing has not gone through, so the block stays.
  at = q.state.landingBlocked!.retryAt!;
  q.send({ type: 'tick' }, at);
  const next = q.state.runs.find((r) => r.status === 'running' && r.seq >= q.state.landingBlocked!.retrying!.fromRunSeq)!;
  q.send({ type: 'run_finished', runId: next.id, passed: true }, at + 1_000);
  expect(q.state.landingBlocked).toMatchObject({ kind: 'land', since: 0 });
  q.send({ type: 'merge_finished', runId: q.merges().at(-1)!.runId, ok: true, newBaseSha: 'landed' }, at + 2_000);
  expect(q.state.landingBlocked).toBeNull();
});

test('a build refused for a run asked before the try is not the try\'s answer', () => {
  const q = queue({ concurrency: 2 });
  [1, 2].forEach((n) => q.submit(n));
  q.send({ type: 'landing_impossible', runId: 'r1', message: 'the App may not push mq/*' });
  // r2's start, asked before the block, is still being carried out (host back-off) when the try comes.
  q.send({ type: 'tick' }, LANDING_RETRY_FIRST_MS);
  expect(q.state.landingBlocked?.retrying).toBeDefined();
  q.send({ type: 'landing_impossible', runId: 'r2', message: 'the App may not push mq/* (late)' }, LANDING_RETRY_FIRST_MS + 1_000);
  expect(q.state.landingBlocked).toMatchObject({ tries: 0, retrying: expect.any(Object), message: 'the App may not push mq/*' });
});

test('a late refusal to build does not block again a queue an operator just changed', () => {
  const q = queue({ concurrency: 2 });
  [1, 2].forEach((n) => q.submit(n));
  q.send({ type: 'landing_impossible', runId: 'r1', message: 'the App may not push mq/*' });
  q.send({ type: 'config_changed', config: q.state.config, requestedState: 'RUNNING' });
  expect(q.state.landingBlocked).toBeNull();
  q.send({ type: 'landing_impossible', runId: 'r1', message: 'the App may not push mq/*' });
  expect(q.state.landingBlocked).toBeNull();
});

test('a block saved before tries were kept is tried a minute after it began', () => {
  const q = queue();
  q.submit(1);
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  q.send({ type: 'merge_finished', runId: 'r1', ok: false, reason: 'blocked', message: 'refused' });
  const { tries: _tries, retryAt: _retryAt, ...older } = q.state.landingBlocked!;
  Object.assign(q.state, { landingBlocked: older });
  q.send({ type: 'tick' }, LANDING_RETRY_FIRST_MS);
  expect(q.merges()).toHaveLength(2);
});

test('our own merge reported as a branch move before its outcome keeps the runs behind it', () => {
  const q = queue({ concurrency: 3 });
  [1, 2, 3].forEach((n) => q.submit(n));
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  // The push webhook of our own landing (the head is now r1's tested commit) arrives first.
  q.send({ type: 'base_moved', sha: 'tested-r1' });
  expect(q.state.runs.map((r) => r.id)).toEqual(['r1', 'r2', 'r3']);
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'tested-r1' });
  expect(q.states()).toEqual({ 2: 'TESTING', 3: 'TESTING' });
  expect(q.state.runs.map((r) => r.id)).toEqual(['r2', 'r3']);
  expect(q.starts()).toBe(3);
  // A late report of the head our merge replaced is stale, not a move back.
  q.send({ type: 'base_moved', sha: 'base0' });
  expect(q.state.baseSha).toBe('tested-r1');
  expect(q.state.runs.map((r) => r.id)).toEqual(['r2', 'r3']);
});

test('a branch reset by hand to a head our merge replaced: once a landing finds the branch there, the read head is taken and nothing loops', () => {
  const q = queue({ concurrency: 2 });
  [1, 2].forEach((n) => q.submit(n));
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'tested-r1' });
  // Someone resets the branch back to base0; the read that follows their push looks like a stale report, and is ignored.
  q.send({ type: 'base_moved', sha: 'base0' });
  expect(q.state.baseSha).toBe('tested-r1');
  q.send({ type: 'run_finished', runId: 'r2', passed: true });
  expect(q.merges().at(-1)).toMatchObject({ runId: 'r2', expectedBaseSha: 'tested-r1' });
  // The host finds the branch elsewhere than expected: the next read is the branch's head, replaced or not.
  q.send({ type: 'merge_finished', runId: 'r2', ok: false, reason: 'base_moved' });
  expect(q.state.awaitingBaseHead).toBe(true);
  q.send({ type: 'base_moved', sha: 'base0' });
  expect(q.state.baseSha).toBe('base0');
  expect(q.state.baseHeadDisputed).toBeUndefined();
  // #2 is tested again on base0, and lands from there.
  expect(q.state.runs).toEqual([expect.objectContaining({ baseSha: 'base0', ahead: [], unit: [expect.objectContaining({ entryId: 'e2' })] })]);
  const run = q.state.runs[0]!.id;
  q.send({ type: 'run_finished', runId: run, passed: true });
  expect(q.merges().at(-1)).toMatchObject({ runId: run, expectedBaseSha: 'base0' });
  q.send({ type: 'merge_finished', runId: run, ok: true, newBaseSha: 'tested-again' });
  expect(q.states()).toEqual({});
  // Trust was for one read only: a late report of a replaced head is stale again.
  q.send({ type: 'base_moved', sha: 'base0' });
  expect(q.state.baseSha).toBe('tested-again');
});

test('a real move reported during a merge applies once the merge is decided', () => {
  const q = queue({ concurrency: 2 });
  [1, 2].forEach((n) => q.submit(n));
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  q.send({ type: 'base_moved', sha: 'someone-else' });
  q.send({ type: 'merge_finished', runId: 'r1', ok: false, reason: 'base_moved' });
  expect(q.state.baseSha).toBe('someone-else');
  // Nothing is rebuilt before the head read after the refusal (which is believed, whatever it says).
  expect(q.state.runs).toEqual([]);
  expect(q.state.awaitingBaseHead).toBe(true);
  q.send({ type: 'base_moved', sha: 'someone-else' });
  // Both rebuilt on the new head.
  expect(q.state.runs.map((r) => r.baseSha)).toEqual(['someone-else', 'someone-else']);
});

test('an admitted PR keeps its place and its run while the host recomputes mergeability; a definite conflict still demotes it', () => {
  const q = queue({ concurrency: 2 });
  [1, 2].forEach((n) => q.submit(n));
  // After a push to the base GitHub answers mergeable: null for a while.
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: { ...facts('h1'), mergeability: 'in_progress' }, merged: false });
  expect(q.states()).toEqual({ 1: 'TESTING', 2: 'TESTING' });
  expect(q.starts()).toBe(2);
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: facts('h1'), merged: false });
  expect(q.starts()).toBe(2);
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: { ...facts('h1'), mergeability: 'not_mergeable' }, merged: false });
  expect(q.states()).toEqual({ 1: 'NOT_READY', 2: 'TESTING' });
});

test('an admitted PR keeps its place and its run while a required check of its head runs again; a failed check still demotes it', () => {
  const q = queue({ concurrency: 2 });
  [1, 2].forEach((n) => q.submit(n));
  // GitHub says `blocked` while the re-run is pending (the adapter tells such a block apart: checksPending).
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: { ...facts('h1'), mergeability: 'not_mergeable', checksPending: true }, merged: false });
  expect(q.states()).toEqual({ 1: 'TESTING', 2: 'TESTING' });
  expect(q.starts()).toBe(2);
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: { ...facts('h1'), mergeability: 'not_mergeable' }, merged: false });
  expect(q.states()).toEqual({ 1: 'NOT_READY', 2: 'TESTING' });
  // Not admitted while its checks run: it enters once GitHub lets it merge.
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: { ...facts('h1'), mergeability: 'not_mergeable', checksPending: true }, merged: false });
  expect(q.states()[1]).toBe('NOT_READY');
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: facts('h1'), merged: false });
  expect(q.states()[1]).not.toBe('NOT_READY');
});

test('a landing the host predicts it would refuse: the run goes back untested, nothing starts until an operator changes the queue or its try comes', () => {
  const q = queue({ concurrency: 2 });
  [1, 2].forEach((n) => q.submit(n));
  q.send({ type: 'landing_impossible', runId: 'r1', message: 'squash merges are off' });
  expect(q.state.landingBlocked).toEqual({ since: 0, message: 'squash merges are off', kind: 'build', tries: 0, retryAt: LANDING_RETRY_FIRST_MS });
  // r2 (behind r1) may still run; nothing new starts, and #1 waits PENDING (not failed).
  expect(q.states()[1]).toBe('PENDING');
  const started = q.starts();
  for (let i = 0; i < 3; i++) q.send({ type: 'tick' });
  expect(q.starts()).toBe(started);
  q.send({ type: 'config_changed', config: { ...q.state.config, mergeMethod: 'merge_commit' }, requestedState: 'RUNNING' });
  expect(q.state.landingBlocked).toBeNull();
  expect(q.states()[1]).toBe('TESTING');
});

test('a PR the host calls not rebaseable waits NOT_READY when the queue rebases, and only then', () => {
  for (const [mergeMethod, expected] of [
    ['rebase', 'NOT_READY'],
    ['squash', 'TESTING'],
  ] as const) {
    const q = queue({ mergeMethod });
    q.send({ type: 'submitted', entryId: 'e1', prNumber: 1, priority: 100, noBatch: false, facts: { ...facts('h1'), rebaseable: false } });
    expect(q.states()).toEqual({ 1: expected });
  }
});
