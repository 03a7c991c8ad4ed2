/**
 * The risk a PR's size carries (issue 12, point 3): the queue keeps the
 * recent outcomes of PRs of each size class and gives a PR without a client
 * hint its class's failure share, shrunk towards the queue's rate; with an
 * author's record too, the two add in log-odds; a hint is moved by half of
 * what they say; fixed tuning ignores sizes; the record is bounded.
 */
import { authorRisk, derivedRisk } from '../../src/engine/author-risk.js';
import type { EngineRun } from '../../src/engine/model.js';
import { sizeClass, sizeRisk } from '../../src/engine/size-risk.js';
import { observedFailureRate } from '../../src/engine/tuning.js';
import { facts, MINUTE, queueDriver } from './support/queue-driver.js';

type Driver = ReturnType<typeof queueDriver>;
const logit = (p: number) => Math.log(p / (1 - p));
const started = (q: Driver): EngineRun[] => q.log.flatMap((a) => (a.type === 'start_run' ? [a.run] : []));
const submit = (q: Driver, n: number, files: number, author = `author-${n}`, at = 0, risk?: number) =>
  q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: { ...facts(`h${n}`, author), changedFiles: files }, ...(risk !== undefined ? { risk } : {}) }, at);
const entry = (q: Driver, n: number) => q.state.entries.find((e) => e.prNumber === n);

/** PRs through an idle queue one at a time, each by a new author (so no author's record says anything): [files, breaks]. */
function play(q: Driver, history: Array<[number, boolean]>, authors = (n: number) => `author-${n}`): number {
  let at = 0;
  history.forEach(([files, breaks], i) => {
    const n = i + 1;
    submit(q, n, files, authors(n), at);
    const run = started(q).at(-1) as EngineRun;
    at += 30 * MINUTE;
    q.send({ type: 'run_finished', runId: run.id, passed: !breaks, ...(breaks ? { failedChecks: ['ci'] } : {}) }, at);
    if (!breaks) q.send({ type: 'merge_finished', runId: run.id, ok: true, newBaseSha: `base${n}` }, at);
    at += MINUTE;
  });
  return at;
}

/** Big changes (40 files) break half the time, small ones (2 files) never: 8 of each, interleaved. */
const bigBreak: Array<[number, boolean]> = Array.from({ length: 16 }, (_, i) => [i % 2 === 0 ? 40 : 2, i % 4 === 0]);

test('size classes go by powers of four', () => {
  expect([0, 1, 3, 4, 15, 16, 63, 64, 10_000].map(sizeClass)).toEqual([0, 0, 0, 1, 1, 2, 2, 3, 3]);
});

test('a big change gets the risk big changes showed here, a small one less than the queue\'s rate', () => {
  const q = queueDriver({ concurrency: 1 });
  const at = play(q, bigBreak);
  const rate = observedFailureRate(q.state);
  submit(q, 100, 50, 'someone', at); // tested at once: the queue is idle
  submit(q, 101, 45, 'someone-else', at + MINUTE);
  submit(q, 102, 1, 'a-third', at + MINUTE);
  // 4 failures in 8 shrunk towards the queue's rate with a weight of 10; 0 in 8 likewise.
  expect(entry(q, 101)?.risk).toBeCloseTo((4 + 10 * rate) / 18, 9);
  expect(entry(q, 102)?.risk).toBeCloseTo((10 * rate) / 18, 9);
  expect(entry(q, 101)?.risk).toBeGreaterThan(rate);
  expect(entry(q, 102)?.risk).toBeLessThan(rate);
  // The safer small change goes ahead of the big one submitted before it, which ends their batch.
  q.send({ type: 'run_finished', runId: (started(q).at(-1) as EngineRun).id, passed: true }, at + 30 * MINUTE);
  expect(started(q).at(-1)?.unit.map((h) => h.entryId)).toEqual(['e102', 'e101']);
});

test('an author\'s record and a size\'s add up in log-odds: riskier together than either alone', () => {
  const q = queueDriver({ concurrency: 1 });
  // The same big-and-small history, the big ones all by one careless author.
  const at = play(q, bigBreak, (n) => (n % 2 === 1 ? 'careless' : `author-${n}`));
  const rate = observedFailureRate(q.state);
  const author = authorRisk(q.state, 'careless') as number;
  const size = sizeRisk(q.state, 40) as number;
  expect(author).toBeGreaterThan(rate);
  expect(size).toBeGreaterThan(rate);
  const both = derivedRisk(q.state, { author: 'careless', changedFiles: 40 }) as number;
  expect(logit(both)).toBeCloseTo(logit(author) + logit(size) - logit(rate), 9);
  expect(both).toBeGreaterThan(Math.max(author, size));
  // One fact alone: its own risk, exactly.
  expect(derivedRisk(q.state, { changedFiles: 40 })).toBe(size);
  expect(derivedRisk(q.state, { author: 'careless' })).toBe(author);
  expect(derivedRisk(q.state, { author: 'nobody-knows', changedFiles: 1000 })).toBeUndefined();
  submit(q, 100, 40, 'careless', at);
  expect(entry(q, 100)?.risk).toBe(both);
});

test('a class with fewer than five outcomes is not told apart from the queue; the record keeps the newest 50', () => {
  const q = queueDriver({ concurrency: 1 });
  const at = play(q, [
    [200, true],
    [200, true],
    [200, true],
    [200, true],
  ]);
  submit(q, 10, 300, 'new', at);
  expect(entry(q, 10)?.risk).toBeUndefined();
  const long = queueDriver({ concurrency: 1 });
  play(long, Array.from({ length: 55 }, (_, i): [number, boolean] => [1, i < 5]));
  // The five failures came first and are forgotten.
  expect(long.state.sizeOutcomes?.[0]).toEqual(Array.from({ length: 50 }, () => 0));
});

test('a client hint is moved by half of what the size\'s record says; fixed tuning keeps the record but gives no risk from it', () => {
  const q = queueDriver({ concurrency: 1 });
  const at = play(q, bigBreak);
  const size = sizeRisk(q.state, 40) as number;
  submit(q, 100, 40, 'x', at, 0.02);
  expect(logit(entry(q, 100)?.risk as number) - logit(0.02)).toBeCloseTo((logit(size) - logit(observedFailureRate(q.state))) / 2, 9);
  expect(entry(q, 100)?.risk).toBeGreaterThan(0.02);
  submit(q, 101, 2, 'y', at + MINUTE, 0.02);
  expect(entry(q, 101)?.risk).toBeLessThan(0.02);
  const fixed = queueDriver({ concurrency: 1, tuning: 'fixed' });
  const later = play(fixed, bigBreak);
  submit(fixed, 100, 40, 'x', later);
  submit(fixed, 101, 40, 'y', later + MINUTE);
  expect(entry(fixed, 101)?.risk).toBeUndefined();
  expect(sizeRisk(fixed.state, 40)).toBeGreaterThan(observedFailureRate(fixed.state));
});
