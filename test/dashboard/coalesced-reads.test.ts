/**
 * The dashboard's pages read again after live changes at most once per
 * interval, with one trailing read for the changes in between, and none while
 * hidden (found by review: a home page read every queue once per change of each).
 */
import { jest } from '@jest/globals';
import { coalescedReads } from '../../web/src/coalesced-reads.js';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('fifty changes in a second make two reads: one at once, one trailing', () => {
  let reads = 0;
  const live = coalescedReads(() => reads++, 1_000, () => false);
  for (let i = 0; i < 50; i++) {
    live.changed();
    jest.advanceTimersByTime(10);
  }
  expect(reads).toBe(1);
  jest.advanceTimersByTime(1_000);
  expect(reads).toBe(2);
  // Quiet since: no more reads.
  jest.advanceTimersByTime(10_000);
  expect(reads).toBe(2);
  // A change after the quiet is read at once.
  live.changed();
  expect(reads).toBe(3);
  live.stop();
});

test('while hidden nothing is read; shown again, one read if something changed', () => {
  let reads = 0;
  let hidden = true;
  const live = coalescedReads(() => reads++, 1_000, () => hidden);
  live.shown();
  expect(reads).toBe(0);
  live.changed();
  live.changed();
  jest.advanceTimersByTime(5_000);
  expect(reads).toBe(0);
  hidden = false;
  live.shown();
  expect(reads).toBe(1);
  live.shown();
  jest.advanceTimersByTime(5_000);
  expect(reads).toBe(1);
  live.stop();
});
