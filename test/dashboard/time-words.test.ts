/** Durations the pages write ("merges in 3 h 5 min"): minutes only up to an hour, hours up to two days, then days. */
import { duration, relative } from '../../web/src/time-words.js';

test.each([
  [0, '0 min'],
  [59, '59 min'],
  [60, '1 h'],
  [185, '3 h 5 min'],
  [1380, '23 h'],
  [2879, '47 h 59 min'],
  [2880, '2.0 d'],
  [2345.6, '39 h 6 min'],
  [4000, '2.8 d'],
])('%s minutes → %s', (minutes, words) => {
  expect(duration(minutes)).toBe(words);
});

test('relative to a given now, ahead and behind', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');
  expect(relative('2026-11-29T14:05:00Z', now)).toBe('in 2 h 5 min');
  expect(relative('2026-11-29T11:52:00Z', now)).toBe('8 min ago');
  expect(relative('2026-11-29T12:00:20Z', now)).toBe('now');
  expect(relative(undefined, now)).toBe('–');
});
