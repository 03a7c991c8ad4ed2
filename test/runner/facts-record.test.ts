/**
 * A PR's facts, read from the host in the background, are stored by the record
 * step of the decision that applies them (the runner's one write path for
 * entries), before that decision's state changes: never by the host-action loop
 * while the record step writes the same entry.
 */
import { initialEngineState } from '../../src/engine/initial-state.js';
import { decideInputs } from '../../src/runner/decide-inputs.js';
import type { InboxItem } from '../../src/runner/runner-model.js';

const facts = { title: 'Add', author: 'dev', headSha: 'h1', baseBranch: 'main', open: true, draft: false, merged: false, mergeability: 'mergeable' as const, readAt: new Date(0) };

test('a facts read becomes a record_facts action ahead of the transitions it causes', () => {
  const state = initialEngineState('main', { concurrency: 1 }, 'base0');
  const items: InboxItem[] = [
    { id: 'i1', queueId: 'q', at: 0, input: { type: 'submitted', entryId: 'e1', prNumber: 1, priority: 100, noBatch: false, facts: null } },
    {
      id: 'i2',
      queueId: 'q',
      at: 1,
      input: { type: 'pr_facts_read', entryId: 'e1', facts, event: { type: 'pr_facts_changed', prNumber: 1, facts: { headSha: 'h1', baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable' }, merged: false } },
    },
  ];
  const { actions, state: after } = decideInputs(state, items);
  const types = actions.map((a) => (a.type === 'publish_status' ? `publish:${a.state}` : a.type));
  expect(types.indexOf('record_facts')).toBeGreaterThan(-1);
  expect(types.indexOf('record_facts')).toBeLessThan(types.indexOf('publish:TESTING'));
  expect(actions.find((a) => a.type === 'record_facts')).toEqual({ type: 'record_facts', entryId: 'e1', facts });
  expect(after.entries[0]?.state).toBe('TESTING');
});
