import { decide } from '../../src/engine/decide.js';
import { initialEngineState } from '../../src/engine/initial-state.js';
import type { EngineAction, EngineEvent, EngineState, PrFacts } from '../../src/engine/model.js';

/**
 * A PR queued by adding a label leaves the queue when the first read of it made since no longer lists that label: its
 * `labeled` delivery was handled after the label was removed (the removal's first, or lost). The GitHub App no longer
 * reads the labels before submitting (a request per labelled PR). Later removals are the `unlabeled` delivery's to act
 * on (it checks who removed the label), never a read's.
 */
const facts = (readAt: number, labels?: string[]): PrFacts => ({ headSha: 'h1', baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable', ...(labels ? { labels, readAt } : {}) });

function queue() {
  let state: EngineState = initialEngineState('main', { tuning: 'fixed' }, 'base0');
  const actions: EngineAction[] = [];
  const send = (event: EngineEvent, at: number) => {
    const decision = decide(state, event, at);
    state = decision.state;
    actions.push(...decision.actions);
  };
  return {
    get state() {
      return state;
    },
    submit: (at: number, label?: string) => send({ type: 'submitted', entryId: 'e1', prNumber: 1, priority: 100, noBatch: false, facts: null, headSha: 'h1', ...(label ? { label } : {}) }, at),
    /** Facts read at `readAt`, decided at `at`. */
    read: (readAt: number, labels: string[] | undefined, at = readAt + 10) => send({ type: 'pr_facts_changed', prNumber: 1, facts: facts(readAt, labels), merged: false }, at),
    entry: () => state.entries.find((e) => e.id === 'e1'),
    /** The last status shown for the PR. */
    shown: () => actions.filter((a): a is Extract<EngineAction, { type: 'publish_status' }> => a.type === 'publish_status').at(-1),
  };
}

test('queued by its label, the first read since without it: cancelled (user_requested), saying the label is gone', () => {
  const q = queue();
  q.submit(1_000, 'merge-queue');
  q.read(1_100, ['bug']);
  expect(q.entry()).toBeUndefined();
  expect(q.shown()).toMatchObject({ state: 'CANCELLED', reason: 'user_requested', detail: 'the merge-queue label is no longer on the pull request' });
});

test('queued by its label, read with it: queued and tested; neither labels nor the read time are kept in the entry', () => {
  const q = queue();
  q.submit(1_000, 'merge-queue');
  q.read(1_100, ['bug', 'merge-queue']);
  expect(q.entry()?.state).toBe('TESTING');
  expect(q.entry()?.facts).not.toHaveProperty('labels');
  expect(q.entry()?.facts).not.toHaveProperty('readAt');
  expect(q.entry()?.submittedByLabel).toBeUndefined();
});

test('once a read found the label, a later read without it decides nothing (found by review: a triage user removing it, which the App refuses, cancelled the PR)', () => {
  const q = queue();
  q.submit(1_000, 'merge-queue');
  q.read(1_100, ['merge-queue']);
  q.read(5_000, []);
  expect(q.entry()?.state).toBe('TESTING');
});

test('a read begun before the label submitted the PR says nothing of the label (found by review: a stale read cancelled it)', () => {
  const q = queue();
  q.submit(1_000, 'merge-queue');
  q.read(900, [], 1_050);
  expect(q.entry()?.state).toBe('TESTING');
  // The next read, made after the submission, decides.
  q.read(1_200, []);
  expect(q.entry()).toBeUndefined();
});

test('queued another way (the API, a command), or facts from a host without labels: labels decide nothing', () => {
  const q = queue();
  q.submit(1_000);
  q.read(1_100, []);
  expect(q.entry()?.state).toBe('TESTING');
  // Labeled once queued: the label submits nothing new, and a read without it (a triage user removed it) cancels nothing.
  q.submit(2_000, 'merge-queue');
  expect(q.entry()?.submittedByLabel).toBeUndefined();
  q.read(2_100, []);
  expect(q.entry()?.state).toBe('TESTING');
  const r = queue();
  r.submit(1_000, 'merge-queue');
  r.read(1_100, undefined);
  expect(r.entry()?.state).toBe('TESTING');
});
