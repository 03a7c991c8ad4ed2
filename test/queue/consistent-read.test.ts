/**
 * A board's reads agree as of one recorded decision: made again while the
 * runner records (its cursor moved during them), at most three times.
 */
import type { Stores } from '../../src/ports/stores.js';
import { asOfOneDecision } from '../../src/queue/consistent-read.js';

/** Stores whose recordedThrough cursor reads as the list says, one value per read (the last one after that). */
function cursorsReading(values: number[]): Stores {
  let read = 0;
  const cursors = async () => ({ recordedThrough: values[Math.min(read++, values.length - 1)] as number, actedThrough: 0 });
  return { engine: { cursors } } as unknown as Stores;
}

test('one read when nothing was recorded meanwhile', async () => {
  let reads = 0;
  expect(await asOfOneDecision(cursorsReading([4, 4]), 'q', async () => ++reads)).toBe(1);
  expect(reads).toBe(1);
});

test('read again when a decision was recorded during the read, and the agreeing read is answered', async () => {
  let reads = 0;
  expect(await asOfOneDecision(cursorsReading([4, 5, 5, 5]), 'q', async () => ++reads)).toBe(2);
});

test('under a steady stream of decisions, the third read is answered', async () => {
  let reads = 0;
  expect(await asOfOneDecision(cursorsReading([1, 2, 3, 4, 5, 6, 7, 8]), 'q', async () => ++reads)).toBe(3);
});
