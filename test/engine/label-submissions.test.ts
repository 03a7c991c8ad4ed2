import { decide } from '../../src/engine/decide.js';
import { initialEngineState } from '../../src/engine/initial-state.js';
import type { EngineAction, EngineEvent, EngineState, PrFacts } from '../../src/engine/model.js';

/**
 * A PR queued by adding a label leaves the queue when its facts, read after the submission (and on every later read),
 * no longer list that label: its `labeled` delivery was handled after the label was removed, or the `unlabeled` one was
 * lost. The GitHub App no longer reads the labels before submitting (a request per labelled PR).
 */
const facts = (labels?: string[]): PrFacts => ({ headSha: 'h1', baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable', ...(labels ? { labels } : {}) });

function queue() {
  let state: EngineState = initialEngineState('main', { tuning: 'fixed' }, 'base0');
  const actions: EngineAction[] = [];
  const send = (event: EngineEvent) => {
    const decision = decide(state, event, 0);
    state = decision.state;
    actions.push(...decision.actions);
  };
  return {
    get state() {
      return state;
    },
    send,
    submit: (label?: string) => send({ type: 'submitted', entryId: 'e1', prNumber: 1, priority: 100, noBatch: false, facts: null, headSha: 'h1', ...(label ? { label } : {}) }),
    read: (labels?: string[]) => send({ type: 'pr_facts_changed', prNumber: 1, facts: facts(labels), merged: false }),
    entry: () => state.entries.find((e) => e.id === 'e1'),
    /** The last status shown for the PR. */
    shown: () => actions.filter((a): a is Extract<EngineAction, { type: 'publish_status' }> => a.type === 'publish_status').at(-1),
  };
}

test('queued by its label, read without it: cancelled (user_requested), saying the label is gone', () => {
  const q = queue();
  q.submit('merge-queue');
  q.read(['bug']);
  expect(q.entry()).toBeUndefined();
  expect(q.shown()).toMatchObject({ state: 'CANCELLED', reason: 'user_requested', detail: 'the merge-queue label is no longer on the pull request' });
});

test('queued by its label, read with it: queued and tested; the labels are not kept in the entry', () => {
  const q = queue();
  q.submit('merge-queue');
  q.read(['bug', 'merge-queue']);
  expect(q.entry()?.state).toBe('TESTING');
  expect(q.entry()?.facts).not.toHaveProperty('labels');
  // Removed later, and its unlabeled delivery lost: the next read takes it out.
  q.read(['bug']);
  expect(q.entry()).toBeUndefined();
  expect(q.shown()).toMatchObject({ state: 'CANCELLED', reason: 'user_requested' });
});

test('queued another way (the API, a command), or facts from a host without labels: labels decide nothing', () => {
  const q = queue();
  q.submit();
  q.read([]);
  expect(q.entry()?.state).toBe('TESTING');
  const r = queue();
  r.submit('merge-queue');
  r.read(undefined);
  expect(r.entry()?.state).toBe('TESTING');
});
