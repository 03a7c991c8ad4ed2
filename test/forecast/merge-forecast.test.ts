import fc from 'fast-check';
import type { QueueConfig } from '../../src/domain/queue-config.js';
import { overlaps } from '../../src/engine/content.js';
import { decide, decideInPlace } from '../../src/engine/decide.js';
import { initialEngineState } from '../../src/engine/initial-state.js';
import type { EngineEvent, EngineState, PrFacts } from '../../src/engine/model.js';
import { queueOrder } from '../../src/engine/order.js';
import { ciHistoryOf, DEFAULT_CI_HISTORY, type CiHistory } from '../../src/forecast/ci-history.js';
import { forecastMerges } from '../../src/forecast/merge-forecast.js';
import { command, World } from '../engine/support/engine-world.js';

const MIN = 60_000;
const D = 30 * MIN;
const sure: CiHistory = { ciDurationMs: D, failureRate: 0 };

const facts = (n: number, over: Partial<PrFacts> = {}): PrFacts => ({ headSha: `h${n}`, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable', ...over });
const submitted = (n: number, over: { priority?: number; targets?: string[]; facts?: PrFacts } = {}): EngineEvent => ({
  type: 'submitted',
  entryId: `e${n}`,
  prNumber: n,
  priority: over.priority ?? 100,
  noBatch: false,
  facts: over.facts ?? facts(n),
  ...(over.targets ? { targets: { sha: `h${n}`, targets: over.targets } } : {}),
});

/** A queue after these events, each at its time (minutes), through the engine itself. */
function queue(config: Partial<QueueConfig>, events: Array<[number, EngineEvent]>): EngineState {
  let state = initialEngineState('main', { tuning: 'fixed', ...config }, 'base0'); // one PR per run unless a scenario batches (adaptive tuning: adaptive-tuning.test.ts)
  for (const [minute, event] of events) state = decide(state, event, minute * MIN).state;
  return state;
}

/** n PRs submitted at minute 0. */
const submittedAtZero = (config: Partial<QueueConfig>, n: number) => queue(config, Array.from({ length: n }, (_, i) => [0, submitted(i + 1)] as [number, EngineEvent]));

const inMinutes = (etas: Map<string, number>) => Object.fromEntries([...etas].map(([id, at]) => [id, at / MIN]));

test("a running run's PRs merge when it has run one CI duration (not before now); the PRs behind take one duration each", () => {
  const state = submittedAtZero({ concurrency: 1 }, 3);
  expect(state.runs.map((r) => r.unit.map((h) => h.entryId))).toEqual([['e1']]);
  expect(inMinutes(forecastMerges(state, sure, 0))).toEqual({ e1: 30, e2: 60, e3: 90 });
  // Ten minutes later the running PR still finishes at 30; the waiting ones start when it frees the slot.
  expect(inMinutes(forecastMerges(state, sure, 10 * MIN))).toEqual({ e1: 30, e2: 60, e3: 90 });
  // An overdue run may finish any moment: now, and the rest from now.
  expect(inMinutes(forecastMerges(state, sure, 40 * MIN))).toEqual({ e1: 40, e2: 70, e3: 100 });
});

test('a probe holds its CI slot until it or its batch finishes: a PR waiting meanwhile starts then', () => {
  let state = submittedAtZero({ concurrency: 2 }, 1);
  const batch = state.runs[0] as EngineState['runs'][number];
  // A probe of the run in flight took the idle slot at minute 10 (the engine starts one only when nothing waits).
  state.probes = [{ ...batch, id: 'p', seq: state.nextRunSeq++, startedAt: 10 * MIN, probeOf: batch.id }];
  state = decide(state, submitted(2), 15 * MIN).state;
  expect(state.runs.filter((r) => r.status === 'running')).toHaveLength(1); // #2 waits for a slot.
  // The batch ends at 30 (the probe would at 40): #2 starts then.
  expect(inMinutes(forecastMerges(state, sure, 15 * MIN))).toEqual({ e1: 30, e2: 60 });
  // Without the probe, the idle slot would be #2's now.
  expect(inMinutes(forecastMerges({ ...state, probes: [] }, sure, 15 * MIN))).toEqual({ e1: 30, e2: 45 });
});

test('concurrency 2 halves the waves of a single queue', () => {
  const one = forecastMerges(submittedAtZero({ concurrency: 1 }, 8), sure, 0);
  const two = forecastMerges(submittedAtZero({ concurrency: 2 }, 8), sure, 0);
  expect(one.get('e8')).toBe(8 * D);
  expect(two.get('e8')).toBe(4 * D);
  expect(inMinutes(two)).toEqual({ e1: 30, e2: 30, e3: 60, e4: 60, e5: 90, e6: 90, e7: 120, e8: 120 });
});

test('a higher failure rate gives later ETAs, never earlier ones', () => {
  const state = submittedAtZero({ concurrency: 4 }, 20);
  const rates = [0, 0.1, 0.3, 0.6];
  const forecasts = rates.map((failureRate) => forecastMerges(state, { ciDurationMs: D, failureRate }, 0));
  for (let i = 1; i < forecasts.length; i++) {
    for (const [id, eta] of forecasts[i] as Map<string, number>) expect(eta).toBeGreaterThanOrEqual(forecasts[i - 1]?.get(id) as number);
    expect(forecasts[i]?.get('e20')).toBeGreaterThan(forecasts[i - 1]?.get('e20') as number);
  }
  // The front PR has nothing ahead of it to fail.
  expect(new Set(forecasts.map((f) => f.get('e1')))).toEqual(new Set([D]));
});

test('batches: PRs tested together share an ETA; a partial batch waits for batchingMaxWaitTimeMinutes', () => {
  // concurrency 1, 10% prior failures: the engine batches up to 1/(1·0.1) = 10 PRs.
  const config: Partial<QueueConfig> = { concurrency: 1, batch: true, batchingMinSize: 3, batchingMaxWaitTimeMinutes: 20 };
  const waiting = queue(config, [
    [0, submitted(1)],
    [5, submitted(2)],
  ]);
  expect(waiting.runs).toEqual([]);
  // The batch of two waits for a third PR until 20 minutes after the first was admitted.
  expect(inMinutes(forecastMerges(waiting, sure, 5 * MIN))).toEqual({ e1: 50, e2: 50 });
  const full = queue(config, [
    [0, submitted(1)],
    [5, submitted(2)],
    [6, submitted(3)],
  ]);
  expect(full.runs.map((r) => r.unit.length)).toEqual([3]);
  expect(inMinutes(forecastMerges(full, sure, 6 * MIN))).toEqual({ e1: 36, e2: 36, e3: 36 });
  // With failures expected, a batch member may wait for its half to be retested.
  expect(forecastMerges(full, { ciDurationMs: D, failureRate: 0.2 }, 6 * MIN).get('e1')).toBe(36 * MIN + 0.2 * D);
});

test('a passed run behind a running one waits for it; with optimistic merging it lands everything ahead now', () => {
  const events: Array<[number, EngineEvent]> = [
    [0, submitted(1)],
    [0, submitted(2)],
    [0, submitted(3)],
    [20, { type: 'run_finished', runId: 'r2', passed: true }],
  ];
  const strict = queue({ concurrency: 3 }, events);
  expect(strict.runs.map((r) => r.status)).toEqual(['running', 'passed', 'running']);
  expect(inMinutes(forecastMerges(strict, sure, 20 * MIN))).toEqual({ e1: 30, e2: 30, e3: 30 });
  const optimistic = queue({ concurrency: 3, canOptimisticallyMerge: true }, events);
  expect(optimistic.mergingRunId).toBe('r2');
  expect(inMinutes(forecastMerges(optimistic, sure, 20 * MIN))).toEqual({ e1: 20, e2: 20, e3: 30 });
});

test('parallel lanes: a PR waits for the PRs ahead in its lane only', () => {
  const state = queue({ mode: 'parallel', concurrency: 2 }, [
    [0, submitted(1, { targets: ['x'] })],
    [0, submitted(2, { targets: ['x'] })],
    [0, submitted(3, { targets: ['y'] })],
    [0, submitted(4, { targets: ['y'] })],
  ]);
  expect(state.runs.map((r) => r.unit[0]?.entryId)).toEqual(['e1', 'e2']);
  expect(inMinutes(forecastMerges(state, sure, 0))).toEqual({ e1: 30, e2: 30, e3: 60, e4: 60 });
  // A failure expected in lane x delays lane x, not lane y.
  const risky = forecastMerges(state, { ciDurationMs: D, failureRate: 0.5 }, 0);
  expect(risky.get('e2')).toBeGreaterThan(30 * MIN);
  expect(risky.get('e3')).toBe(60 * MIN);
  expect(risky.get('e4')).toBeGreaterThan(60 * MIN);
});

test('a paused queue or a blocked landing gives no ETA; a draining one only for PRs under test', () => {
  const state = submittedAtZero({ concurrency: 2 }, 4);
  expect(forecastMerges({ ...state, requestedState: 'PAUSED' }, sure, 0).size).toBe(0);
  expect(forecastMerges({ ...state, landingBlocked: { since: 0, message: 'protected' } }, sure, 0).size).toBe(0);
  expect(inMinutes(forecastMerges({ ...state, requestedState: 'DRAINING' }, sure, 0))).toEqual({ e1: 30, e2: 30 });
  // A host outage only delays: the ETAs assume it ends now.
  expect(inMinutes(forecastMerges({ ...state, hostOutage: { since: 0, message: '502' } }, sure, 0))).toEqual({ e1: 30, e2: 30, e3: 60, e4: 60 });
});

test('NOT_READY PRs get no ETA and hold no place', () => {
  const state = queue({ concurrency: 1 }, [
    [0, submitted(1)],
    [0, submitted(2, { facts: facts(2, { mergeability: 'in_progress' }) })],
    [0, submitted(3)],
  ]);
  expect(state.entries.find((e) => e.id === 'e2')?.state).toBe('NOT_READY');
  expect(inMinutes(forecastMerges(state, sure, 0))).toEqual({ e1: 30, e3: 60 });
});

test('with no history, the defaults: a 10-minute run, 10% failures', () => {
  expect(ciHistoryOf([])).toEqual(DEFAULT_CI_HISTORY);
  expect(DEFAULT_CI_HISTORY).toEqual({ ciDurationMs: 10 * MIN, failureRate: 0.1 });
  const state = submittedAtZero({ concurrency: 1 }, 1);
  expect(forecastMerges(state, ciHistoryOf([]), 0).get('e1')).toBe(10 * MIN);
  // Nonsense history (no duration, a rate out of range) falls back or is clamped.
  expect(forecastMerges(state, { ciDurationMs: Number.NaN, failureRate: 7 }, 0).get('e1')).toBe(10 * MIN);
});

test('history: the median duration, and a failure share shrunk toward the prior while runs are few', () => {
  const runs = [10, 20, 30, 40].map((m, i) => ({ durationMs: m * MIN, failed: i === 0 }));
  expect(ciHistoryOf(runs)).toEqual({ ciDurationMs: 25 * MIN, failureRate: (1 + 0.1 * 10) / (4 + 10) });
  expect(ciHistoryOf(runs.slice(0, 3)).ciDurationMs).toBe(20 * MIN);
  const many = Array.from({ length: 990 }, (_, i) => ({ durationMs: MIN, failed: i % 2 === 0 }));
  expect(ciHistoryOf(many).failureRate).toBeCloseTo(0.496, 3);
});

test('property: over any engine history, only queued PRs get an ETA, none before now, and none before a PR it builds on', () => {
  fc.assert(
    fc.property(fc.array(command, { minLength: 30, maxLength: 100 }), fc.double({ min: 0, max: 1, noNaN: true }), (commands, failureRate) => {
      const world = new World();
      for (const c of commands) {
        world.apply(c);
        const { state, now } = world;
        const etas = forecastMerges(state, { ciDurationMs: 20 * MIN, failureRate }, now);
        const order = queueOrder(state);
        for (const id of etas.keys()) expect(order.some((e) => e.id === id)).toBe(true);
        for (const eta of etas.values()) expect(eta).toBeGreaterThanOrEqual(now);
        const single = (state.switchingToMode ?? state.config.mode) === 'single';
        const known = order.filter((e) => etas.has(e.id));
        known.forEach((later, j) => {
          for (const ahead of known.slice(0, j)) {
            if (single || overlaps(ahead, later)) expect(etas.get(later.id)).toBeGreaterThanOrEqual(etas.get(ahead.id) as number);
          }
        });
        if (state.requestedState === 'RUNNING' && !state.landingBlocked) expect(etas.size).toBe(order.length);
      }
    }),
    { numRuns: 100, ...(process.env.MQ_FORECAST_SEED ? { seed: Number(process.env.MQ_FORECAST_SEED), path: process.env.MQ_FORECAST_PATH, endOnFailure: true } : {}) },
  );
});

test('a queue of 10,000 PRs gets 10,000 ETAs', () => {
  let state = initialEngineState('main', { concurrency: 4, batch: true }, 'base0');
  // The engine admits and orders the first PRs; the rest are copies of a waiting one (decide per PR would take minutes).
  for (let n = 1; n <= 50; n++) state = decideInPlace(state, submitted(n), 0).state;
  const template = state.entries.find((e) => e.state === 'PENDING');
  expect(template).toBeDefined();
  for (let n = 51; n <= 10_000; n++) state.entries.push({ ...(template as EngineState['entries'][number]), id: `e${n}`, prNumber: n, submittedAt: n, facts: facts(n) });
  const etas = forecastMerges(state, { ciDurationMs: D, failureRate: 0.1 }, 0);
  expect(etas.size).toBe(10_000);
  const order = queueOrder(state);
  expect(etas.get(order.at(-1)?.id as string)).toBeGreaterThan(etas.get(order[0]?.id as string) as number);
});
