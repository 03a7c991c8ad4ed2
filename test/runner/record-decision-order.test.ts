/**
 * recordDecision writes a decision's state changes for many PRs in one write,
 * one PR's in their order, and finishes them before any effect that may read
 * them (here a timeline record, which reads the entry's state).
 */
import { recordDecision } from '../../src/runner/record-decision.js';
import type { ActionContext } from '../../src/runner/execute-actions.js';
import type { RunnerAction } from '../../src/runner/runner-model.js';
import { Timers } from '../../src/runner/timers.js';

function recordingContext() {
  const log: string[] = [];
  const writes: string[][] = [];
  const state = new Map<string, string>();
  const entries = {
    async recordTransitions(changes: Array<{ entryId: string; event: { state: string } }>) {
      const write = changes.map(({ entryId, event }) => `${entryId} ${event.state}`);
      writes.push(write);
      log.push(`start ${write.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      for (const { entryId, event } of changes) state.set(entryId, event.state);
      log.push(`end ${write.join(', ')}`);
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
  return { ctx, log, writes, timers };
}

const status = (entryId: string, state: string): RunnerAction => ({ type: 'publish_status', entryId, prNumber: 1, state, reason: 'ready' }) as RunnerAction;

test("state changes of different PRs go in one write, one PR's in their order, and a reading effect waits for them", async () => {
  const { ctx, log, writes } = recordingContext();
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
  // Held back past the event, written together up to the effect that reads them; the one after it, after it.
  expect(writes).toEqual([['a PENDING', 'b PENDING', 'a TESTING', 'c PENDING'], ['b TESTING']]);
  // The timeline record reads the state the changes before it wrote; the change after it comes after.
  expect(log).toEqual(['start a PENDING, b PENDING, a TESTING, c PENDING', 'end a PENDING, b PENDING, a TESTING, c PENDING', 'read a TESTING', 'start b TESTING', 'end b TESTING']);
});
