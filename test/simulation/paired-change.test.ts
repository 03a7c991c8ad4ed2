/**
 * The tuning tool's seed-by-seed comparison (bench/paired-change.ts): the mean
 * change of p95 in log-ratio with its standard error, over the seeds both runs
 * share.
 */
import { formatPairedChange, pairedChange } from '../../bench/paired-change.js';

const run = (p95s: Record<string, number>, rate = 7) => Object.fromEntries(Object.entries(p95s).map(([seed, p95]) => [seed, { p95QueueMinutes: p95, mergedPerHour: rate }]));

test('each seed is compared with itself: the mean log-ratio, its standard error, and how many seeds moved which way', () => {
  const change = pairedChange(run({ 6: 100, 7: 200, 8: 50 }), run({ 6: 50, 7: 200, 8: 100, 9: 10 }, 7.5));
  expect(change).not.toBeNull();
  // Seed 9 is in one run only.
  expect(change?.seeds).toBe(3);
  expect(change?.meanLogRatio).toBeCloseTo(0, 12);
  // log-ratios -ln 2, 0, +ln 2: sample variance (2·ln²2)/2, standard error ln 2 / √3.
  expect(change?.standardError).toBeCloseTo(Math.LN2 / Math.sqrt(3), 12);
  expect([change?.better, change?.worse]).toEqual([1, 1]);
  expect(change?.mergedPerHourDiff).toBeCloseTo(0.5, 12);
  expect(formatPairedChange(change as NonNullable<typeof change>)).toBe('p95 +0.0 % ± 40.0 % per seed (log-ratio, mean ± standard error), 1 seeds better, 1 worse, merged/h +0.500, over 3 seeds');
});

test('a uniform cut shows as that cut with no spread; no shared seed gives nothing', () => {
  const change = pairedChange(run({ 1: 100, 2: 200 }), run({ 1: 90, 2: 180 }));
  expect(change?.meanLogRatio).toBeCloseTo(Math.log(0.9), 12);
  expect(change?.standardError).toBeCloseTo(0, 12);
  expect(change?.better).toBe(2);
  expect(pairedChange(run({ 1: 100 }), run({ 2: 100 }))).toBeNull();
});
