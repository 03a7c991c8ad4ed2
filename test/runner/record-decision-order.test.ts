/**
 * recordDecision writes a decision's state changes for many PRs at once, one
 * PR's in their order, and finishes them before any effect that may read them
 * (here a timeline record, which reads the entry's state).
 */
import { recordDecision } from '../../src/runner/record-decision.js';
import type { ActionContext } from '../../src/runner/execute-actions.js';
import type { RunnerAction } from '../../src/runner/runner-model.js';
import { Timers } from '../../src/runner/timers.js';

function recordingContext() {
  const log: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const state = new Map<string, string>();
  const entries = {
    async recordTransition(entryId: string, event: { state: string }) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      log.push(`start ${entryId} ${event.state}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      state.set(entryId, event.state);
      log.push(`end ${entryId} ${event.state}`);
      inFlight--;
    },
    async findById(entryId: string) {
      log.push(`read ${entryId} ${state.get(entryId)}`);
      return { id: entryId, state: state.get(entryId) };
    },
    async appendTimeline() {},
  };
  const timers = new Timers();
  const ctx = {
    queue: { id: 'q', repo: { host: 'h', owner: 'o', name: 'n' }, targetBranch: 'main' },
    stores: { entries },
    log: { info() {}, warn() {}, error() {} },
    timers,
    now: () => 1000,
    report: async () => undefined,
    wake: () => undefined,
    positionOf: () => undefined,
  } as unknown as ActionContext;
  return { ctx, log, maxInFlight: () => maxInFlight, timers };
}

const status = (entryId: string, state: string): RunnerAction => ({ type: 'publish_status', entryId, prNumber: 1, state, reason: 'ready' }) as RunnerAction;

test("state changes of different PRs overlap, one PR's keep their order, and a reading effect waits for them", async () => {
  const { ctx, log, maxInFlight } = recordingContext();
  const actions: RunnerAction[] = [
    status('a', 'PENDING'),
    { type: 'emit', event: { type: 'pull_request.submitted', prNumbers: [1], seq: 1 } } as RunnerAction,
    status('b', 'PENDING'),
    status('a', 'TESTING'),
    status('c', 'PENDING'),
    { type: 'record_timeline', entryId: 'a', reason: 'restart_requested', at: 1000 },
    status('b', 'TESTING'),
  ];
  await recordDecision(ctx, 1, actions);
  expect(maxInFlight()).toBe(3);
  // One PR's changes in their order.
  expect(log.indexOf('end a PENDING')).toBeLessThan(log.indexOf('start a TESTING'));
  // The timeline record reads the state the changes before it wrote; the change after it comes after.
  expect(log.indexOf('read a TESTING')).toBeGreaterThan(log.indexOf('end c PENDING'));
  expect(log.indexOf('start b TESTING')).toBeGreaterThan(log.indexOf('read a TESTING'));
  expect(log.at(-1)).toBe('end b TESTING');
});
