/**
 * The slow-answer watch (host-outage.ts) reports an outage for a step of host actions left unanswered, and not for
 * one the host just answered after an outage (found by review: timed between carryOutThroughOutages' recovery and its
 * report, it reported the outage again, and the step's end a second recovery).
 */
import { watchForSlowAnswer, type OutageTracking } from '../../src/runner/host-outage.js';
import type { RunnerInput } from '../../src/runner/runner-model.js';

const silent = { info() {}, warn() {}, error() {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function watched(tracking: OutageTracking) {
  const reported: string[] = [];
  let clock = 100;
  const watch = watchForSlowAnswer(tracking, 'merge', { log: silent, now: () => clock++, report: async (input: RunnerInput) => void reported.push(input.type) }, 20);
  return { watch, reported };
}

test('a step unanswered past the wait is reported once as an outage, and its success ends it', async () => {
  const tracking: OutageTracking = { queueId: 'q', outage: null };
  const { watch, reported } = watched(tracking);
  await sleep(40);
  expect(reported).toEqual(['host_unavailable']);
  await watch.settled(true);
  expect(reported).toEqual(['host_unavailable', 'host_recovered']);
  expect(tracking.outage).toBeNull();
});

test('a step the host answered after an outage, its recovery not yet recorded, is no new outage', async () => {
  const tracking: OutageTracking = { queueId: 'q', outage: null };
  const { watch, reported } = watched(tracking);
  // What carryOutThroughOutages' recovery does first, before recording host_recovered: the outage ends, an answer came.
  tracking.answeredAt = 1_000;
  await sleep(40);
  await watch.settled(true);
  expect(reported).toEqual([]);
});
