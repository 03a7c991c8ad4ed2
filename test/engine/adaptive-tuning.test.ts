/**
 * Adaptive tuning (issue 12, point 1): the default queue chooses batch size,
 * batch waits, bisection and failure handling from its observed break rate,
 * within `concurrency`; giving any of those settings fixes them as given.
 */
import { DEFAULT_QUEUE_CONFIG, withSettings } from '../../src/domain/queue-config.js';
import { initialEngineState } from '../../src/engine/initial-state.js';
import type { EngineRun } from '../../src/engine/model.js';
import { tuningOf } from '../../src/engine/tuning.js';
import { MINUTE, queueDriver } from './support/queue-driver.js';

const started = (q: ReturnType<typeof queueDriver>): EngineRun[] => q.log.flatMap((a) => (a.type === 'start_run' ? [a.run] : []));
const units = (q: ReturnType<typeof queueDriver>) => started(q).map((r) => r.unit.map((h) => Number(h.entryId.slice(1))));

test('new queues are adaptive; giving a setting adaptive tuning chooses fixes the tuning, and naming the tuning wins', () => {
  expect(DEFAULT_QUEUE_CONFIG.tuning).toBe('adaptive');
  expect(withSettings(DEFAULT_QUEUE_CONFIG, { concurrency: 4 }).tuning).toBe('adaptive');
  expect(withSettings(DEFAULT_QUEUE_CONFIG, { pendingFailureDepth: 1 }).tuning).toBe('fixed');
  expect(withSettings(DEFAULT_QUEUE_CONFIG, { batch: true, tuning: 'adaptive' }).tuning).toBe('adaptive');
  const fixed = tuningOf(initialEngineState('main', { batch: true, batchingMinSize: 3, batchingMaxWaitTimeMinutes: 7, bisectionConcurrency: 2, pendingFailureDepth: 1, canOptimisticallyMerge: true }));
  expect(fixed).toMatchObject({ batchingMinSize: 3, batchingMaxWaitMinutes: 7, bisectionConcurrency: 2, pendingFailureDepth: 1, canOptimisticallyMerge: true, batchPassFloor: null });
});

test('batch size follows the observed break rate: big when PRs rarely break, one PR per run when they often do', () => {
  const state = initialEngineState('main', { concurrency: 4 });
  const prior = tuningOf(state);
  expect(prior.expectedBatchSize).toBe(3); // 1 / (4 · 10 %), the prior, rounded
  state.recentOutcomes = Array<number>(50).fill(0);
  const healthy = tuningOf(state);
  expect(healthy.expectedBatchSize).toBe(15);
  state.recentOutcomes = Array<number>(50).fill(1);
  const broken = tuningOf(state);
  expect(broken).toMatchObject({ expectedBatchSize: 1, batchingMinSize: 1, batchingMaxWaitMinutes: 0 });
  // A failed batch is split as many ways as runs may be in flight.
  expect(broken.bisectionConcurrency).toBe(4);
});

test('a PR never waits for company; the PRs waiting when a run can start are batched, up to the size the break rate allows', () => {
  const q = queueDriver({ concurrency: 1 });
  q.submit(1);
  expect(units(q)).toEqual([[1]]);
  for (const n of [2, 3, 4, 5]) q.submit(n, n * MINUTE);
  q.send({ type: 'run_finished', runId: 'r1', passed: true }, 30 * MINUTE);
  // One run at a time at the prior 10 % break rate: 1 / (1 · 10 %) = 10 PRs may go together.
  expect(units(q)).toEqual([[1], [2, 3, 4, 5]]);
  const four = queueDriver({ concurrency: 4 });
  for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9]) four.submit(n, n * MINUTE);
  four.send({ type: 'run_finished', runId: 'r1', passed: true }, 30 * MINUTE);
  // Four runs at once: batches of 1 / (4 · 10 %) = 2.5, rounded to 3 PRs.
  expect(units(four)).toEqual([[1], [2], [3], [4], [5, 6, 7]]);
});

test('a fixed queue keeps its settings whatever the break rate', () => {
  const q = queueDriver({ concurrency: 1, batch: false });
  q.submit(1);
  q.submit(2);
  q.submit(3);
  q.send({ type: 'run_finished', runId: 'r1', passed: true });
  expect(units(q)).toEqual([[1], [2]]);
});
