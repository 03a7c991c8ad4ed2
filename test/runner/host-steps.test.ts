/**
 * How a decision's host actions are carried out: one after another, except that
 * a host answering from this service's database (the sandbox) takes a stretch
 * of statuses of different PRs at once; a PR's second status waits for its first.
 */
import { hostSteps } from '../../src/runner/host-steps.js';
import type { RunnerAction } from '../../src/runner/runner-model.js';

const status = (entryId: string, state: string): RunnerAction => ({ type: 'publish_status', entryId, prNumber: 1, state, reason: 'ready' }) as RunnerAction;
const merge: RunnerAction = { type: 'merge', runId: 'r1', entryIds: ['a'] } as unknown as RunnerAction;
const names = (steps: RunnerAction[][]) => steps.map((step) => step.map((a) => (a.type === 'publish_status' ? `${a.entryId}:${a.state}` : a.type)));

test('statuses of different PRs form one step; other actions and a PR\'s next status start new ones', () => {
  const actions = [status('a', 'PENDING'), status('b', 'PENDING'), status('c', 'PENDING'), status('a', 'TESTING'), merge, status('b', 'TESTING'), status('d', 'PENDING')];
  expect(names(hostSteps(actions, true))).toEqual([['a:PENDING', 'b:PENDING', 'c:PENDING'], ['a:TESTING'], ['merge'], ['b:TESTING', 'd:PENDING']]);
});

test('a remote host gets every action alone, in order', () => {
  const actions = [status('a', 'PENDING'), status('b', 'PENDING'), merge];
  expect(names(hostSteps(actions, false))).toEqual([['a:PENDING'], ['b:PENDING'], ['merge']]);
  expect(hostSteps([], true)).toEqual([]);
});
