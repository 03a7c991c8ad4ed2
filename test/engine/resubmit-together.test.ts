/**
 * A cancel and a submission of the same PR (the same entry id) decided together: the entry concludes, then comes
 * back new. Its new state must be published after the cancellation, whatever it was before the decision, or the
 * stored entry stays CANCELLED while the engine queues the PR.
 */
import { decideAllInPlace } from '../../src/engine/decide.js';
import { initialEngineState } from '../../src/engine/initial-state.js';
import type { EngineEvent, PrFacts } from '../../src/engine/model.js';

const facts = (headSha: string): PrFacts => ({ headSha, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable' });
const submit = (n: number): EngineEvent => ({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`) });

test.each([
  ['waiting behind a busy queue (PENDING)', 1],
  ['testing (in a run)', 0],
])('cancelled and submitted again in one decision while %s: published CANCELLED, then its new state', (_name, runsAhead) => {
  // Concurrency 1: PR 1 tests; PR 2 waits PENDING behind it.
  const state = initialEngineState('main', { concurrency: 1, tuning: 'fixed' }, 'base0');
  decideAllInPlace(state, [1, 2].map((n) => ({ event: submit(n), at: n })));
  const n = runsAhead === 0 ? 1 : 2;
  expect(state.entries.find((e) => e.prNumber === n)?.state).toBe(runsAhead === 0 ? 'TESTING' : 'PENDING');
  const { actions } = decideAllInPlace(state, [
    { event: { type: 'cancelled', entryId: `e${n}` }, at: 10 },
    { event: submit(n), at: 11 },
  ]);
  const published = actions.flatMap((a) => (a.type === 'publish_status' && a.entryId === `e${n}` ? [a.state] : []));
  expect(published[0]).toBe('CANCELLED');
  expect(published.length).toBeGreaterThan(1);
  expect(published.at(-1)).toBe(state.entries.find((e) => e.id === `e${n}`)?.state);
});
