import { ciDuration, ciModel, ciOutcome } from '../../src/simulation/ci-model.js';
import { deriveRng, Rng } from '../../src/simulation/random.js';
import type { SimPr } from '../../src/simulation/workload.js';

const pr = (number: number, over: Partial<SimPr> = {}): SimPr => ({ number, arrivesAt: 0, breaks: false, flakyRate: 0, targets: ['g'], riskHint: 0, author: 'a0', changedFiles: 1, ...over });

test('the same seed gives the same numbers; another seed or label does not', () => {
  const draw = (rng: Rng) => Array.from({ length: 5 }, () => rng.next());
  expect(draw(new Rng(42))).toEqual(draw(new Rng(42)));
  expect(draw(new Rng(42))).not.toEqual(draw(new Rng(43)));
  expect(draw(deriveRng(1, 'ci'))).not.toEqual(draw(deriveRng(1, 'workload')));
});

test('a run fails when any PR it contains breaks, base included', () => {
  const model = ciModel([], 0);
  const rng = new Rng(1);
  expect(ciOutcome(model, [pr(1), pr(2)], rng)).toEqual({ kind: 'passed' });
  expect(ciOutcome(model, [pr(1, { breaks: true }), pr(2)], rng)).toEqual({ kind: 'failed', cause: 'broken' });
});

test('a conflicting pair fails with a merge conflict on the later PR, only when both are present', () => {
  const model = ciModel([[1, 3]], 0);
  const rng = new Rng(1);
  expect(ciOutcome(model, [pr(1), pr(2), pr(3)], rng)).toEqual({ kind: 'conflict', prNumber: 3 });
  expect(ciOutcome(model, [pr(3), pr(1)], rng)).toEqual({ kind: 'conflict', prNumber: 1 });
  expect(ciOutcome(model, [pr(2), pr(3)], rng)).toEqual({ kind: 'passed' });
});

test('runs fail spuriously at about the flaky rate, never when flakes are off', () => {
  const rng = new Rng(7);
  const flaky = ciModel([], 0.2);
  const failures = Array.from({ length: 5000 }, () => ciOutcome(flaky, [pr(1)], rng)).filter((o) => o.kind === 'failed').length;
  expect(failures / 5000).toBeGreaterThan(0.17);
  expect(failures / 5000).toBeLessThan(0.23);
  const perPr = ciModel([], 0);
  const withFlakyPr = Array.from({ length: 2000 }, () => ciOutcome(perPr, [pr(1, { flakyRate: 0.5 })], rng)).filter((o) => o.kind === 'failed').length;
  expect(withFlakyPr).toBeGreaterThan(800);
  const oracle = ciModel([], 1, false);
  expect(ciOutcome(oracle, [pr(1)], rng)).toEqual({ kind: 'passed' });
});

test('CI durations stay within mean ± jitter; conflicts fail within a minute', () => {
  const rng = new Rng(3);
  for (let i = 0; i < 100; i++) {
    const ms = ciDuration({ meanMinutes: 30, jitterMinutes: 5 }, { kind: 'passed' }, rng);
    expect(ms).toBeGreaterThanOrEqual(25 * 60_000);
    expect(ms).toBeLessThanOrEqual(35 * 60_000);
  }
  expect(ciDuration({ meanMinutes: 30, jitterMinutes: 5 }, { kind: 'conflict', prNumber: 1 }, rng)).toBe(60_000);
});
