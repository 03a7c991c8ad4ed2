/**
 * The CI history a queue's writer keeps for its forecast (CiHistoryKeeper): read at most every TTL, added to by
 * each run result the writer records, and never kept from a read that a recording of run results overlapped: it
 * could miss the runs, or find them and then count them twice once they are added.
 */
import type { TestRunRecord } from '../../src/domain/records.js';
import { CiHistoryKeeper } from '../../src/runner/ci-history-keeper.js';

const TTL = 10 * 60_000;

function finishedRun(id: string, failed = false): TestRunRecord {
  const createdAt = new Date(0);
  return { id, status: failed ? 'failed' : 'succeeded', createdAt, finishedAt: new Date(5 * 60_000), testBranchSha: `sha-${id}` } as unknown as TestRunRecord;
}

/** A database of finished runs whose reads can be held back, and a clock. */
function world() {
  const stored: TestRunRecord[] = [];
  const clock = { now: 0 };
  let reads = 0;
  let hold: Promise<void> | null = null;
  const keeper = new CiHistoryKeeper(
    async () => {
      reads++;
      const found = [...stored];
      if (hold) await hold;
      return found;
    },
    () => clock.now,
    TTL,
  );
  return { keeper, stored, clock, reads: () => reads, holdReads: (until: Promise<void> | null) => (hold = until) };
}

test('a read made while run results are being recorded finds them, but is not kept: the runs are counted once', async () => {
  const w = world();
  expect((await w.keeper.current()).samples).toHaveLength(0);
  // A decision records run r1's result: the write lands, and a forecast reads the history before the recording ends.
  w.keeper.recordingRuns();
  w.stored.push(finishedRun('r1'));
  w.clock.now += TTL + 1; // The kept history has aged out: the forecast reads it.
  expect((await w.keeper.current()).samples).toHaveLength(1);
  w.keeper.recordedRuns([finishedRun('r1')]);
  expect((await w.keeper.current()).samples).toHaveLength(1);
  expect(w.reads()).toBe(3); // The read during the recording was not kept; the one after was.
  expect((await w.keeper.current()).samples).toHaveLength(1);
  expect(w.reads()).toBe(3);
});

test('a read begun before a run result was recorded is not kept: the next forecast counts the run', async () => {
  const w = world();
  let release = () => {};
  w.holdReads(new Promise<void>((resolve) => (release = resolve)));
  const before = w.keeper.current();
  w.holdReads(null);
  w.keeper.recordingRuns();
  w.stored.push(finishedRun('r1', true));
  w.keeper.recordedRuns([finishedRun('r1', true)]);
  release();
  expect((await before).samples).toHaveLength(0); // What it found, for its own caller.
  const after = await w.keeper.current();
  expect(after.samples).toEqual([{ durationMs: 5 * 60_000, failed: true }]);
});

test('between reads, each recorded run joins the kept history without a read; after the TTL it is read again', async () => {
  const w = world();
  await w.keeper.current();
  for (const id of ['r1', 'r2']) {
    w.keeper.recordingRuns();
    w.stored.push(finishedRun(id));
    w.keeper.recordedRuns([finishedRun(id)]);
  }
  expect((await w.keeper.current()).samples).toHaveLength(2);
  expect(w.reads()).toBe(1);
  w.clock.now += TTL + 1;
  expect((await w.keeper.current()).samples).toHaveLength(2);
  expect(w.reads()).toBe(2);
});
