/**
 * A risk the queue derives itself (issue 12, point 3): a PR without a client
 * hint is as risky as its author's recent PRs here, shrunk towards the
 * queue's break rate; a hint is moved by half of what the record says; fixed
 * tuning ignores authors; the record is bounded and rebuilt the same by a replay.
 */
import { authorOutcome, authorRisk, recordAuthorOutcome } from '../../src/engine/author-risk.js';
import { decide } from '../../src/engine/decide.js';
import { initialEngineState } from '../../src/engine/initial-state.js';
import { PROVEN_RISK } from '../../src/engine/risk.js';
import type { EngineEntry, EngineEvent, EngineRun, EngineState } from '../../src/engine/model.js';
import { observedFailureRate } from '../../src/engine/tuning.js';
import { facts, MINUTE, queueDriver } from './support/queue-driver.js';

type Driver = ReturnType<typeof queueDriver>;
const started = (q: Driver): EngineRun[] => q.log.flatMap((a) => (a.type === 'start_run' ? [a.run] : []));
const prs = (heads: EngineRun['unit']) => heads.map((h) => Number(h.entryId.slice(1)));
const submit = (q: Driver, n: number, author: string, at: number, risk?: number) =>
  q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`, author), ...(risk !== undefined ? { risk } : {}) }, at);
const entry = (q: Driver, n: number) => q.state.entries.find((e) => e.prNumber === n);

/**
 * PRs of `history` go through the idle queue one at a time (concurrency 1):
 * each is tested alone and merges or fails by its flag. Returns the time after.
 */
function play(q: Driver, history: Array<[string, boolean]>, first = 1, at = 0): number {
  history.forEach(([author, breaks], i) => {
    const n = first + i;
    submit(q, n, author, at);
    const run = started(q).at(-1) as EngineRun;
    expect(prs(run.unit)).toEqual([n]);
    at += 30 * MINUTE;
    q.send({ type: 'run_finished', runId: run.id, passed: !breaks, ...(breaks ? { failedChecks: ['ci'] } : {}) }, at);
    if (!breaks) q.send({ type: 'merge_finished', runId: run.id, ok: true, newBaseSha: `base${n}` }, at);
    at += MINUTE;
  });
  return at;
}

/**
 * PR 10, likely to break, was submitted at `at` and PR 11 after it: the run behind is built without PR 10, whose own
 * run then passes and makes it a safe PR (PROVEN_RISK). Returns the time of the pass.
 */
function passBetAgainst(q: Driver, at: number): number {
  const behind = started(q).at(-1) as EngineRun;
  expect([prs(behind.ahead), prs(behind.unit)]).toEqual([[], [11]]);
  const passedAt = at + 30 * MINUTE;
  q.send({ type: 'run_finished', runId: (started(q).find((r) => prs(r.unit).includes(10)) as EngineRun).id, passed: true }, passedAt);
  expect(entry(q, 10)?.risk).toBe(PROVEN_RISK);
  return passedAt;
}

/** A repeat offender (three failures of four) and a reliable author (four merges), interleaved. */
const habits: Array<[string, boolean]> = [
  ['reckless', true],
  ['careful', false],
  ['reckless', true],
  ['careful', false],
  ['reckless', false],
  ['careful', false],
  ['reckless', true],
  ['careful', false],
];

test('a repeat offender\'s next PR goes behind a reliable author\'s submitted after it, and is tested alone after their batch', () => {
  const q = queueDriver({ concurrency: 1 });
  let at = play(q, habits);
  const offender = authorRisk(q.state, 'reckless') as number;
  const reliable = authorRisk(q.state, 'careful') as number;
  // 3 failures in 4, shrunk towards the queue's rate (about 0.2 here); 0 in 4 likewise.
  expect(offender).toBeGreaterThan(0.35);
  expect(reliable).toBeLessThan(0.15);
  submit(q, 20, 'careful', at); // the queue is idle: tested at once
  submit(q, 21, 'reckless', at + MINUTE);
  submit(q, 22, 'careful', at + 2 * MINUTE);
  submit(q, 23, 'careful', at + 3 * MINUTE);
  expect(entry(q, 21)?.risk).toBeCloseTo(offender, 9);
  at += 30 * MINUTE;
  q.send({ type: 'run_finished', runId: (started(q).find((r) => prs(r.unit).includes(20)) as EngineRun).id, passed: true }, at);
  // The reliable author's PRs go first and batch; the offender's (above 0.4: likely to break, so no
  // run bets on it) is tested alone after them, where its failure costs least.
  expect(offender).toBeGreaterThan(0.4);
  expect(prs((started(q).at(-1) as EngineRun).unit)).toEqual([22, 23]);
  at += 30 * MINUTE;
  q.send({ type: 'run_finished', runId: (started(q).at(-1) as EngineRun).id, passed: true }, at);
  q.send({ type: 'merge_finished', runId: (started(q).at(-1) as EngineRun).id, ok: true, newBaseSha: 'after-22-23' }, at);
  expect(prs((started(q).at(-1) as EngineRun).unit)).toEqual([21]);
});

test('with runs to spare, the repeat offender\'s PR is tested alone while the reliable author\'s batch', () => {
  const q = queueDriver({ concurrency: 2 });
  let at = play(q, habits);
  submit(q, 20, 'careful', at);
  submit(q, 21, 'careful', at); // both slots busy
  submit(q, 22, 'reckless', at + MINUTE);
  submit(q, 23, 'careful', at + 2 * MINUTE);
  submit(q, 24, 'careful', at + 3 * MINUTE);
  at += 30 * MINUTE;
  for (const n of [20, 21]) {
    const run = started(q).find((r) => prs(r.unit).includes(n)) as EngineRun;
    q.send({ type: 'run_finished', runId: run.id, passed: true }, at);
    q.send({ type: 'merge_finished', runId: run.id, ok: true, newBaseSha: `b${n}` }, at);
  }
  expect(started(q).slice(-2).map((r) => prs(r.unit))).toEqual([[23, 24], [22]]);
  // Without authors, the same arrivals batch in FIFO order.
  const plain = queueDriver({ concurrency: 2 });
  at = play(plain, habits);
  for (const [n, t] of [[20, 0], [21, 0], [22, 1], [23, 2], [24, 3]]) plain.submit(n as number, at + (t as number) * MINUTE);
  at += 30 * MINUTE;
  for (const n of [20, 21]) {
    const run = started(plain).find((r) => prs(r.unit).includes(n)) as EngineRun;
    plain.send({ type: 'run_finished', runId: run.id, passed: true }, at);
    plain.send({ type: 'merge_finished', runId: run.id, ok: true, newBaseSha: `b${n}` }, at);
  }
  expect(started(plain).slice(-2).map((r) => prs(r.unit))).toEqual([[22, 23], [24]]);
});

test('with the same history, PRs without an author keep FIFO order (what the service does not know moves nothing)', () => {
  const q = queueDriver({ concurrency: 1 });
  let at = play(q, habits);
  q.submit(20, at);
  q.submit(21, at + MINUTE);
  q.submit(22, at + 2 * MINUTE);
  at += 30 * MINUTE;
  q.send({ type: 'run_finished', runId: (started(q).at(-1) as EngineRun).id, passed: true }, at);
  expect(prs((started(q).at(-1) as EngineRun).unit)).toEqual([21, 22]);
});

test('a client hint is moved by half of what the author\'s record says, in log-odds, at submission and when given later', () => {
  const q = queueDriver({ concurrency: 1 });
  const at = play(q, habits);
  const logit = (p: number) => Math.log(p / (1 - p));
  const rate = observedFailureRate(q.state);
  const offender = authorRisk(q.state, 'reckless') as number;
  submit(q, 20, 'careful', at);
  submit(q, 21, 'reckless', at + MINUTE, 0.01);
  const reckless = entry(q, 21) as EngineEntry;
  expect(reckless.hint).toBe(0.01);
  expect(logit(reckless.risk as number) - logit(0.01)).toBeCloseTo((logit(offender) - logit(rate)) / 2, 9);
  expect(reckless.risk).toBeGreaterThan(0.01);
  // Still far below what the record alone says: the hint is evidence of its own.
  expect(reckless.risk).toBeLessThan(offender);
  // The careful author's record moves a hint down.
  submit(q, 22, 'careful', at + 2 * MINUTE, 0.1);
  expect(entry(q, 22)?.risk).toBeLessThan(0.1);
  // A hint given later replaces the risk and is weighed the same way.
  q.send({ type: 'priority_changed', entryId: 'e21', priority: 100, noBatch: false, risk: 0.8 }, at + 3 * MINUTE);
  expect(entry(q, 21)?.hint).toBe(0.8);
  expect(logit(entry(q, 21)?.risk as number) - logit(0.8)).toBeCloseTo((logit(authorRisk(q.state, 'reckless') as number) - logit(observedFailureRate(q.state))) / 2, 9);
});

test('facts read again later do not weigh a hint twice', () => {
  const q = queueDriver({ concurrency: 1 });
  const at = play(q, habits);
  submit(q, 20, 'careful', at);
  submit(q, 21, 'reckless', at + MINUTE, 0.05);
  const moved = entry(q, 21)?.risk as number;
  expect(moved).toBeGreaterThan(0.05);
  q.send({ type: 'pr_facts_changed', prNumber: 21, facts: facts('h21', 'reckless'), merged: false }, at + 2 * MINUTE);
  expect(entry(q, 21)?.risk).toBe(moved);
});

test('the same hint sent again (a retried submit) changes nothing: a pass that answered the bet on it stands; a new hint replaces it', () => {
  const q = queueDriver({ concurrency: 3 });
  let at = 0;
  submit(q, 10, 'x', at, 0.6); // likely to break: tested alone, the run behind built without it
  submit(q, 11, 'y', at + MINUTE);
  at = passBetAgainst(q, at);
  const runs = started(q).length;
  q.send({ type: 'submitted', entryId: 'e10', prNumber: 10, priority: 100, noBatch: false, facts: facts('h10', 'x'), risk: 0.6 }, at + MINUTE);
  expect(entry(q, 10)?.risk).toBe(PROVEN_RISK);
  // Nothing was rebuilt without it again.
  expect(started(q).length).toBe(runs);
  q.send({ type: 'submitted', entryId: 'e10', prNumber: 10, priority: 100, noBatch: false, facts: facts('h10', 'x'), risk: 0.02 }, at + 2 * MINUTE);
  expect(entry(q, 10)?.risk).toBe(0.02);
});

test('a hint is kept as it is while the records say nothing yet', () => {
  const q = queueDriver({ concurrency: 1 });
  submit(q, 1, 'new', 0, 0.3);
  expect(entry(q, 1)?.risk).toBe(0.3);
});

test('fixed tuning keeps what the client says: no risk from the author', () => {
  const q = queueDriver({ concurrency: 1, tuning: 'fixed' });
  const at = play(q, habits);
  submit(q, 20, 'reckless', at);
  submit(q, 21, 'reckless', at + MINUTE);
  expect(entry(q, 21)?.risk).toBeUndefined();
  // The record is still kept, so switching to adaptive tuning starts informed.
  expect(authorRisk(q.state, 'reckless')).toBeGreaterThan(0.35);
});

test('an author with fewer than three outcomes is not told apart from the queue', () => {
  const q = queueDriver({ concurrency: 1 });
  const at = play(q, [
    ['new', true],
    ['new', true],
  ]);
  submit(q, 10, 'new', at);
  expect(entry(q, 10)?.risk).toBeUndefined();
});

test('only a PR\'s own breakage counts against its author: not cancellations, time-outs or refusals', () => {
  expect(authorOutcome('FAILED', 'failed_tests')).toBe(1);
  expect(authorOutcome('FAILED', 'merge_conflict')).toBe(1);
  expect(authorOutcome('MERGED', 'merged')).toBe(0);
  expect(authorOutcome('FAILED', 'timed_out')).toBeNull();
  expect(authorOutcome('FAILED', 'merge_refused')).toBeNull();
  expect(authorOutcome('CANCELLED', 'user_requested')).toBeNull();
  expect(authorOutcome('MERGED', 'merged_outside_queue')).toBeNull();
  const q = queueDriver({ concurrency: 1 });
  submit(q, 1, 'x', 0);
  q.send({ type: 'cancelled', entryId: 'e1' }, MINUTE);
  expect(q.state.authorOutcomes ?? []).toEqual([]);
});

test('a derived risk likely to break is bet against once per attempt: after its pass it is not deferred again', () => {
  const q = queueDriver({ concurrency: 3 });
  let at = play(q, [
    ['reckless', true],
    ['reckless', true],
    ['reckless', true],
    ['reckless', true],
  ]);
  submit(q, 10, 'reckless', at);
  expect(entry(q, 10)?.risk).toBeGreaterThanOrEqual(0.5);
  submit(q, 11, 'careful', at + MINUTE);
  // Its pass makes it a safe PR, whatever its author's record says.
  at = passBetAgainst(q, at);
  // New facts of the same attempt (a mergeability recheck) do not bring the author's risk back.
  q.send({ type: 'pr_facts_changed', prNumber: 10, facts: facts('h10', 'reckless'), merged: false }, at + MINUTE);
  expect(entry(q, 10)?.risk).toBe(PROVEN_RISK);
  const retest = started(q).at(-1) as EngineRun;
  expect([prs(retest.ahead), prs(retest.unit)]).toEqual([[11], [10]]);
});

test('the record stays bounded: at most 20 outcomes per author and 200 authors, the least recent forgotten first', () => {
  const state = initialEngineState('main', {}, 'base0');
  for (let i = 0; i < 30; i++) recordAuthorOutcome(state, 'prolific', 1);
  for (let a = 0; a < 250; a++) recordAuthorOutcome(state, `author${a}`, 0);
  recordAuthorOutcome(state, 'author200', 1); // concluded again: now the most recent
  const records = state.authorOutcomes ?? [];
  expect(records).toHaveLength(200);
  expect(records.every((r) => r.outcomes.length <= 20)).toBe(true);
  expect(records.map((r) => r.author)).not.toContain('prolific');
  expect(records.at(-1)).toEqual({ author: 'author200', outcomes: [0, 1] });
  expect(records[0]?.author).toBe('author50');
  // Through decide as well: one author's many PRs keep 20 outcomes.
  const q = queueDriver({ concurrency: 1 });
  play(q, Array.from({ length: 25 }, (_, i): [string, boolean] => ['busy', i % 5 === 0]));
  expect(q.state.authorOutcomes).toEqual([{ author: 'busy', outcomes: Array.from({ length: 20 }, (_, i) => ((i + 5) % 5 === 0 ? 1 : 0)) }]);
});

test('replaying the events, through JSON as the runner persists state, gives the same state and actions', () => {
  const q = queueDriver({ concurrency: 2 });
  play(q, habits);
  const events: Array<{ event: EngineEvent; at: number }> = [];
  const actions: unknown[] = [];
  const record = (event: EngineEvent, at: number) => {
    events.push({ event, at });
    actions.push(q.send(event, at).actions);
  };
  let at = 10 * 60 * MINUTE;
  for (const [n, author] of [[30, 'reckless'], [31, 'careful'], [32, 'careful'], [33, 'reckless']] as const) {
    record({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`, author) }, (at += MINUTE));
  }
  for (const run of started(q).filter((r) => r.status === 'running').slice(-2)) record({ type: 'run_finished', runId: run.id, passed: false, failedChecks: ['ci'] }, (at += 30 * MINUTE));
  const saved = JSON.parse(JSON.stringify(q.state)) as EngineState;
  // Replay from the state before these events, persisted as JSON.
  const before = queueDriver({ concurrency: 2 });
  play(before, habits);
  let state = JSON.parse(JSON.stringify(before.state)) as EngineState;
  const replayed: unknown[] = [];
  for (const { event, at: t } of events) {
    const decision = decide(JSON.parse(JSON.stringify(state)) as EngineState, event, t);
    state = decision.state;
    replayed.push(decision.actions);
  }
  expect(state).toEqual(saved);
  expect(replayed).toEqual(actions);
  // The replay went through derived risks and a record that moved.
  expect(state.entries.some((e) => e.risk !== undefined)).toBe(true);
});
