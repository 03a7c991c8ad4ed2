/** What the engine is given of a PR head's impacted targets, whether read back from the store or just uploaded. */
import { asEngineTargets, MAX_ENGINE_TARGETS } from '../../src/runner/engine-inputs.js';

test('a list the engine can compare is given as it is; ALL, or a list too long to compare pairwise, as ALL', () => {
  expect(asEngineTargets('h1', ['//a', '//b'])).toEqual({ sha: 'h1', targets: ['//a', '//b'] });
  expect(asEngineTargets('h1', 'ALL')).toEqual({ sha: 'h1', targets: 'ALL' });
  const longest = Array.from({ length: MAX_ENGINE_TARGETS }, (_, i) => `//t${i}`);
  expect(asEngineTargets('h2', longest).targets).toHaveLength(MAX_ENGINE_TARGETS);
  expect(asEngineTargets('h2', [...longest, '//one-more'])).toEqual({ sha: 'h2', targets: 'ALL' });
});
