import type { QueueEntryRecord, TestRunRecord, TimelineEvent } from '../../src/domain/records.js';
import { percentile, queueHealth } from '../../src/dashboard/queue-health.js';

const HOUR = 60 * 60 * 1000;
const T0 = Date.parse('2026-11-25T00:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

function entry(prNumber: number, events: Array<[number, TimelineEvent['state'], TimelineEvent['reason']]>): QueueEntryRecord {
  return {
    id: `q:${prNumber}`,
    queueId: 'q',
    prNumber,
    attempt: 1,
    state: events.at(-1)?.[1] ?? 'PENDING',
    priority: 100,
    noBatch: false,
    submittedAt: at(events[0]?.[0] ?? 0),
    stateChangedAt: at(events.at(-1)?.[0] ?? 0),
    concludedAt: null,
    facts: null,
    timeline: events.map(([m, state, reason]) => ({ at: at(m), state, reason })),
  };
}

function run(finishedMinute: number, status: TestRunRecord['status'], built = true): TestRunRecord {
  return {
    id: `r${finishedMinute}`,
    queueId: 'q',
    status,
    baseSha: 'b',
    testBranch: 'mq/main/r',
    testBranchSha: built ? 'c0ffee' : null,
    testedPullRequests: [],
    dependentPullRequests: [],
    isBisection: false,
    requiredStatuses: [],
    requiredStatusesSource: 'queue',
    checkRuns: [],
    statusChecks: [],
    failureStatuses: [],
    impactedTargets: null,
    createdAt: at(finishedMinute - 10),
    finishedAt: at(finishedMinute),
  };
}

test('merges, time in queue, ejections by reason, restarts and CI runs land in the bucket of the hour they happened', () => {
  const entries = [
    entry(1, [[0, 'NOT_READY', 'submitted'], [1, 'TESTING', 'test_started'], [30, 'MERGED', 'merged']]),
    entry(2, [[10, 'NOT_READY', 'submitted'], [20, 'TESTING', 'restart_requested'], [40, 'TESTING', 'retried'], [70, 'MERGED', 'merged']]),
    entry(3, [[5, 'NOT_READY', 'submitted'], [65, 'FAILED', 'failed_tests']]),
    entry(4, [[5, 'NOT_READY', 'submitted'], [66, 'FAILED', 'merge_conflict']]),
    // Cancelled, then submitted again and merged: each attempt counts from its own submission.
    entry(5, [[0, 'NOT_READY', 'submitted'], [40, 'CANCELLED', 'user_requested'], [100, 'NOT_READY', 'resubmitted'], [110, 'MERGED', 'merged']]),
  ];
  const runs = [run(25, 'succeeded'), run(64, 'failed'), run(68, 'succeeded'), run(109, 'succeeded'), run(50, 'cancelled', false)];
  const health = queueHealth(entries, runs, { from: T0, to: T0 + 2 * HOUR, bucketMs: HOUR });
  expect(health.buckets.map((b) => [b.merged, b.cancelled, b.restarts, b.ciRuns])).toEqual([
    // The cancelled run never got a test branch: it spent no CI.
    [1, 1, 1, 1],
    [2, 0, 0, 3],
  ]);
  expect(health.buckets[1]?.ejected).toEqual({ failed_tests: 1, merge_conflict: 1 });
  // Waits: #1 30 min (hour 0); #2 60 min and #5 10 min (hour 1).
  expect([health.buckets[0]?.timeInQueueP50, health.buckets[1]?.timeInQueueP50, health.buckets[1]?.timeInQueueP95]).toEqual([30, 10, 60]);
  expect(health.totals).toEqual({ merged: 3, ejected: { failed_tests: 1, merge_conflict: 1 }, restarts: 1, retries: 1, ciRuns: 4, ciRunsPerMerged: 1.33, timeInQueueP50: 30, timeInQueueP95: 60 });
});

test('events outside the window are left out; an empty window has no percentiles', () => {
  const entries = [entry(1, [[0, 'NOT_READY', 'submitted'], [30, 'MERGED', 'merged']])];
  const health = queueHealth(entries, [run(30, 'succeeded')], { from: T0 + HOUR, to: T0 + 2 * HOUR, bucketMs: 15 * 60_000 });
  expect(health.buckets).toHaveLength(4);
  expect(health.totals).toMatchObject({ merged: 0, ciRuns: 0, ciRunsPerMerged: null, timeInQueueP50: null, timeInQueueP95: null });
});

test('percentile is nearest-rank', () => {
  expect(percentile([], 0.5)).toBeNull();
  expect(percentile([1, 2, 3, 4], 0.5)).toBe(2);
  expect(percentile([1, 2, 3, 4], 0.95)).toBe(4);
  expect(percentile([7], 0.95)).toBe(7);
});
