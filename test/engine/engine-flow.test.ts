import { decide } from '../../src/engine/decide.js';
import { initialEngineState } from '../../src/engine/initial-state.js';
import type { Decision, EngineAction, EngineEvent, EngineState, PrFacts } from '../../src/engine/model.js';
import type { QueueConfig } from '../../src/domain/queue-config.js';

const facts = (headSha: string, over: Partial<PrFacts> = {}): PrFacts => ({ headSha, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable', ...over });

/** A small driver: feeds events, keeps the state, remembers every action. */
function queue(config: Partial<QueueConfig> = {}) {
  let state: EngineState = initialEngineState('main', { tuning: 'fixed', ...config }, 'base0'); // one PR per run unless a scenario batches (adaptive tuning: adaptive-tuning.test.ts)
  let now = 0;
  const log: EngineAction[] = [];
  const api = {
    get state() {
      return state;
    },
    send(event: EngineEvent, at = now): Decision {
      now = at;
      const decision = decide(state, event, now);
      state = decision.state;
      log.push(...decision.actions);
      return decision;
    },
    submit(n: number, over: { priority?: number; noBatch?: boolean } = {}) {
      return api.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: over.priority ?? 100, noBatch: over.noBatch ?? false, facts: facts(`h${n}`) });
    },
    states: () => Object.fromEntries(state.entries.map((e) => [e.prNumber, e.state])),
    runs: () => state.runs.map((r) => ({ id: r.id, status: r.status, ahead: r.ahead.map((h) => h.entryId), unit: r.unit.map((h) => h.entryId) })),
    actions: (type: EngineAction['type']) => log.filter((a) => a.type === type),
    finish(runId: string, passed: boolean, at = now) {
      return api.send({ type: 'run_finished', runId, passed, ...(passed ? {} : { failedChecks: ['ci/test'] }) }, at);
    },
    completeMerge(decision?: Decision) {
      const merge = (decision?.actions ?? log).filter((a) => a.type === 'merge').at(-1) as Extract<EngineAction, { type: 'merge' }>;
      return api.send({ type: 'merge_finished', runId: merge.runId, ok: true, newBaseSha: `m-${merge.runId}` });
    },
    statuses: (pr: number) => log.filter((a): a is Extract<EngineAction, { type: 'publish_status' }> => a.type === 'publish_status' && a.prNumber === pr).map((a) => `${a.state}:${a.reason}`),
  };
  return api;
}

test('one PR flows NOT_READY → PENDING → TESTING → TESTS_PASSED → MERGED', () => {
  const q = queue();
  const first = q.submit(1);
  expect(first.actions.find((a) => a.type === 'start_run')).toMatchObject({ run: { baseSha: 'base0', unit: [{ entryId: 'e1', headSha: 'h1' }], ahead: [] } });
  expect(q.states()).toEqual({ 1: 'TESTING' });
  const passed = q.finish('r1', true);
  expect(passed.actions).toContainEqual({ type: 'merge', runId: 'r1', entryIds: ['e1'], expectedBaseSha: 'base0' });
  q.completeMerge();
  expect(q.state.entries).toEqual([]);
  expect(q.state.baseSha).toBe('m-r1');
  expect(q.statuses(1)).toEqual(['PENDING:ready', 'TESTING:test_started', 'TESTS_PASSED:tests_passed', 'MERGED:merged']);
});

test('a PR the host does not call mergeable waits in NOT_READY', () => {
  const q = queue();
  q.send({ type: 'submitted', entryId: 'e1', prNumber: 1, priority: 100, noBatch: false, facts: facts('h1', { mergeability: 'in_progress' }) });
  expect(q.states()).toEqual({ 1: 'NOT_READY' });
  expect(q.actions('start_run')).toEqual([]);
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: facts('h1'), merged: false });
  expect(q.states()).toEqual({ 1: 'TESTING' });
});

test('a push to a PR waiting in NOT_READY cancels it: the head submitted is what was asked for, not the next one', () => {
  const q = queue();
  q.send({ type: 'submitted', entryId: 'e1', prNumber: 1, priority: 100, noBatch: false, facts: facts('h1', { mergeability: 'in_progress' }) });
  expect(q.states()).toEqual({ 1: 'NOT_READY' });
  const pushed = q.send({ type: 'pr_facts_changed', prNumber: 1, facts: facts('h1-pushed'), merged: false });
  expect(q.state.entries).toEqual([]);
  expect(pushed.actions).toContainEqual(expect.objectContaining({ type: 'publish_status', prNumber: 1, state: 'CANCELLED', reason: 'pushed_to' }));
  expect(q.actions('start_run')).toEqual([]);
});

test('a submission naming its head (a label on GitHub): facts read later for another head are a push, for the same head not', () => {
  const q = queue();
  q.send({ type: 'submitted', entryId: 'e1', prNumber: 1, priority: 100, noBatch: false, facts: null, headSha: 'h1' });
  q.send({ type: 'submitted', entryId: 'e2', prNumber: 2, priority: 100, noBatch: false, facts: null, headSha: 'h2' });
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: facts('h1-pushed'), merged: false });
  q.send({ type: 'pr_facts_changed', prNumber: 2, facts: facts('h2'), merged: false });
  expect(q.statuses(1)).toEqual(['NOT_READY:submitted', 'CANCELLED:pushed_to']);
  expect(q.states()).toEqual({ 2: 'TESTING' });
  // Before its facts are read, targets are taken only for the head the submission named.
  q.send({ type: 'submitted', entryId: 'e4', prNumber: 4, priority: 100, noBatch: false, facts: null, headSha: 'h4' });
  q.send({ type: 'impacted_targets_set', prNumber: 4, targets: { sha: 'h4-older', targets: ['//old'] } });
  expect(q.state.entries.find((e) => e.id === 'e4')?.targets).toBeNull();
  q.send({ type: 'impacted_targets_set', prNumber: 4, targets: { sha: 'h4', targets: ['//new'] } });
  expect(q.state.entries.find((e) => e.id === 'e4')?.targets).toEqual({ sha: 'h4', targets: ['//new'] });
  // Facts that came with the submission, already for another head: cancelled at once.
  q.send({ type: 'submitted', entryId: 'e3', prNumber: 3, priority: 100, noBatch: false, facts: facts('h3-pushed'), headSha: 'h3' });
  expect(q.statuses(3)).toEqual(['CANCELLED:pushed_to']);
  expect(q.states()).toEqual({ 2: 'TESTING', 4: 'NOT_READY' });
});

test('facts read for a submission that had none are not a push', () => {
  const q = queue();
  q.send({ type: 'submitted', entryId: 'e1', prNumber: 1, priority: 100, noBatch: false, facts: null });
  expect(q.states()).toEqual({ 1: 'NOT_READY' });
  q.send({ type: 'pr_facts_changed', prNumber: 1, facts: facts('h1'), merged: false });
  expect(q.states()).toEqual({ 1: 'TESTING' });
});

test('a run the host built nothing for: built again (no verdict), or with one PR refused, that PR fails alone and the others are built without it', () => {
  const q = queue({ concurrency: 1, batch: true, batchingMinSize: 1 });
  q.submit(1);
  q.submit(2);
  const [first] = q.runs();
  expect(first!.unit).toEqual(['e1']);
  q.send({ type: 'run_not_started', runId: first!.id });
  // Built again, with what waits now (the PR behind it joins the batch); nobody failed.
  expect(q.runs()).toEqual([expect.objectContaining({ status: 'running', unit: ['e1', 'e2'] })]);
  expect(q.runs()[0]!.id).not.toBe(first!.id);
  expect(q.states()).toEqual({ 1: 'TESTING', 2: 'TESTING' });
  const [second] = q.runs();
  q.send({ type: 'run_not_started', runId: second!.id, refused: { entryId: 'e1', message: '#1 has more than 250 commits' } });
  expect(q.statuses(1).at(-1)).toBe('FAILED:merge_refused');
  expect(q.runs().flatMap((r) => r.unit)).not.toContain('e1');
  expect(q.states()[2]).toBe('TESTING');
  // A late report for a run no longer running changes nothing.
  const before = q.runs();
  q.send({ type: 'run_not_started', runId: second!.id });
  expect(q.runs()).toEqual(before);
});

test('speculative prefix: with concurrency 3 each run includes the PRs ahead of it', () => {
  const q = queue({ concurrency: 3 });
  [1, 2, 3, 4].forEach((n) => q.submit(n));
  expect(q.runs()).toEqual([
    { id: 'r1', status: 'running', ahead: [], unit: ['e1'] },
    { id: 'r2', status: 'running', ahead: ['e1'], unit: ['e2'] },
    { id: 'r3', status: 'running', ahead: ['e1', 'e2'], unit: ['e3'] },
  ]);
  expect(q.states()[4]).toBe('PENDING');
});

test('a failure at the front fails that PR and rebuilds the runs behind it without it', () => {
  const q = queue({ concurrency: 3 });
  [1, 2, 3].forEach((n) => q.submit(n));
  q.finish('r1', false);
  expect(q.states()).toEqual({ 2: 'TESTING', 3: 'TESTING' });
  expect(q.statuses(1).at(-1)).toBe('FAILED:failed_tests');
  expect(q.actions('cancel_run')).toEqual([{ type: 'cancel_run', runId: 'r2' }, { type: 'cancel_run', runId: 'r3' }]);
  expect(q.runs().map((r) => [r.ahead, r.unit])).toEqual([[[], ['e2']], [['e2'], ['e3']]]);
});

test('a failure behind a PR still testing is PENDING_FAILURE until the PR ahead resolves', () => {
  const q = queue({ concurrency: 2 });
  [1, 2].forEach((n) => q.submit(n));
  q.finish('r2', false);
  expect(q.states()).toEqual({ 1: 'TESTING', 2: 'PENDING_FAILURE' });
  q.finish('r1', true);
  expect(q.statuses(2).at(-1)).toBe('FAILED:failed_tests');
});

test('if the PR ahead fails too, the PENDING_FAILURE PR is tested again without it', () => {
  const q = queue({ concurrency: 2 });
  [1, 2].forEach((n) => q.submit(n));
  q.finish('r2', false);
  q.finish('r1', false);
  expect(q.statuses(1).at(-1)).toBe('FAILED:failed_tests');
  expect(q.states()).toEqual({ 2: 'TESTING' });
  expect(q.runs()).toEqual([{ id: 'r3', status: 'running', ahead: [], unit: ['e2'] }]);
});

test('batching waits for batchingMinSize PRs, at most batchingMaxWaitTimeMinutes', () => {
  const q = queue({ batch: true, batchingMinSize: 3, batchingMaxWaitTimeMinutes: 10 });
  const first = q.submit(1);
  expect(first.actions).toContainEqual({ type: 'wake_at', at: 10 * 60_000 });
  q.submit(2);
  expect(q.actions('start_run')).toEqual([]);
  q.send({ type: 'tick' }, 10 * 60_000);
  expect(q.runs()).toEqual([{ id: 'r1', status: 'running', ahead: [], unit: ['e1', 'e2'] }]);
});

test('a full batch starts at once; noBatch PRs are tested alone and keep their place', () => {
  // pendingFailureDepth keeps a failed PR in the runs behind it, so the batch's run stays valid.
  const q = queue({ batch: true, batchingMinSize: 2, batchingMaxWaitTimeMinutes: 60, concurrency: 3, pendingFailureDepth: 1 });
  q.submit(1);
  q.submit(2, { noBatch: true });
  q.submit(3);
  q.submit(4);
  expect(q.runs().map((r) => [r.ahead, r.unit])).toEqual([
    [[], ['e1']],
    [['e1'], ['e2']],
    [['e1', 'e2'], ['e3', 'e4']],
  ]);
});

test('a failed batch is bisected until the culprit is alone; the innocent PRs merge', () => {
  const q = queue({ batch: true, batchingMinSize: 4, batchingMaxWaitTimeMinutes: 60 });
  [1, 2, 3, 4].forEach((n) => q.submit(n));
  expect(q.runs()).toEqual([{ id: 'r1', status: 'running', ahead: [], unit: ['e1', 'e2', 'e3', 'e4'] }]);
  q.finish('r1', false);
  expect(q.runs()).toEqual([{ id: 'r2', status: 'running', ahead: [], unit: ['e1', 'e2'] }]);
  expect(q.state.runs[0]?.isBisection).toBe(true);
  q.finish('r2', true);
  // The slot is free as soon as r2 passes: the other half is tested on top of it, before its merge.
  expect(q.runs()).toEqual([
    { id: 'r2', status: 'passed', ahead: [], unit: ['e1', 'e2'] },
    { id: 'r3', status: 'running', ahead: ['e1', 'e2'], unit: ['e3', 'e4'] },
  ]);
  q.completeMerge();
  expect(q.runs()).toEqual([{ id: 'r3', status: 'running', ahead: ['e1', 'e2'], unit: ['e3', 'e4'] }]);
  q.finish('r3', false);
  expect(q.runs()).toEqual([{ id: 'r4', status: 'running', ahead: [], unit: ['e3'] }]);
  q.finish('r4', true);
  q.completeMerge();
  expect(q.runs()).toEqual([{ id: 'r5', status: 'running', ahead: ['e3'], unit: ['e4'] }]);
  q.finish('r5', false);
  expect(q.statuses(4).at(-1)).toBe('FAILED:failed_tests');
  expect(q.statuses(1).at(-1)).toBe('MERGED:merged');
  expect(q.statuses(3).at(-1)).toBe('MERGED:merged');
  expect(q.state.entries).toEqual([]);
});

test('urgent preempts runs in flight; high priority only jumps PRs not yet testing', () => {
  const q = queue({ concurrency: 2 });
  [1, 2, 3].forEach((n) => q.submit(n));
  q.submit(4, { priority: 10 });
  expect(q.runs().map((r) => r.unit)).toEqual([['e1'], ['e2']]);
  q.finish('r1', true);
  q.completeMerge();
  expect(q.runs().map((r) => r.unit)).toEqual([['e2'], ['e4']]);
  q.submit(5, { priority: 0 });
  expect(q.actions('cancel_run').map((a) => (a as { runId: string }).runId)).toEqual(['r2', 'r3']);
  // The preempted PRs go back to their places in line: e2 (testing first) before e4.
  expect(q.runs().map((r) => [r.ahead, r.unit])).toEqual([[[], ['e5']], [['e5'], ['e2']]]);
});

test('events for webhooks: numbered in order; a batch announces testing, failure (split at once) and merge', () => {
  const q = queue({ batch: true, batchingMinSize: 2, batchingMaxWaitTimeMinutes: 60, concurrency: 2 });
  [1, 2, 3, 4].forEach((n) => q.submit(n));
  q.finish('r2', false); // The batch behind fails while the one ahead still tests: it is split at once.
  q.finish('r1', true);
  q.completeMerge();
  const emitted = q.actions('emit').map((a) => (a as Extract<EngineAction, { type: 'emit' }>).event);
  expect(emitted.map((e) => e.seq)).toEqual(emitted.map((_, i) => i + 1));
  const types = emitted.map((e) => `${e.type}:${e.prNumbers.join(',')}`);
  expect(types).toEqual(
    expect.arrayContaining(['pull_request.submitted:1', 'pull_request_batch.testing:1,2', 'pull_request_batch.testing:3,4', 'pull_request_batch.failed:3,4', 'pull_request_batch.merged:1,2', 'pull_request.merged:1', 'pull_request.merged:2']),
  );
});

test('a batch whose failure waits on a failed run ahead announces pending_failure', () => {
  // pendingFailureDepth keeps a failed PR in the runs behind it, so the batch's run stays valid.
  const q = queue({ batch: true, batchingMinSize: 2, batchingMaxWaitTimeMinutes: 60, concurrency: 3, pendingFailureDepth: 1 });
  q.submit(1, { noBatch: true });
  q.submit(2, { noBatch: true });
  [3, 4].forEach((n) => q.submit(n));
  expect(q.runs().map((r) => r.unit)).toEqual([['e1'], ['e2'], ['e3', 'e4']]);
  q.finish('r2', false); // PENDING_FAILURE: #1 ahead still tests.
  q.finish('r3', false); // The batch cannot blame itself while #2 ahead failed.
  expect(q.states()).toMatchObject({ 3: 'PENDING_FAILURE', 4: 'PENDING_FAILURE' });
  const emitted = q.actions('emit').map((a) => (a as Extract<EngineAction, { type: 'emit' }>).event);
  expect(emitted.map((e) => `${e.type}:${e.prNumbers.join(',')}`)).toContain('pull_request_batch.pending_failure:3,4');
});
