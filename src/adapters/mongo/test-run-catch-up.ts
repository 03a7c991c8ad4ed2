import { isDeepStrictEqual } from 'node:util';
import type { Connection, Types } from 'mongoose';
import { testRunModel } from './models/test-run.js';
import { testRunPrModel } from './models/test-run-pr.js';
import { testRunRecentModel } from './models/test-run-recent.js';
import { testRunShaModel } from './models/test-run-sha.js';
import { pointPrsAt } from './test-run-prs.js';
import { copyRun, PRS_COMPLETE, RECENT_RUNS_WINDOW_MS } from './test-run-recent.js';
import { pointShaAt, SHAS_COMPLETE, type ShaPointer } from './test-run-shas.js';

/**
 * How long after the marks were set the runs are caught up. A rolling deploy from a version without the pointers and
 * copies ends well within it: its replicas are gone, and with them every writer that leaves a run without them.
 */
export const CATCH_UP_WINDOW_MS = 24 * 60 * 60 * 1000;

type Run = {
  _id: Types.ObjectId;
  queueId: Types.ObjectId;
  status: string;
  testBranchSha: string | null;
  testedPrNumbers?: number[];
  probeOf?: string | null;
  createdAt: Date;
  finishedAt: Date | null;
};
type Mark = { _id: string; at?: Date | null };
type Recent = ReturnType<typeof testRunRecentModel>;
type Runs = ReturnType<typeof testRunModel>;

/**
 * When the newer of the two marks was set, or null before any is. A mark without `at` was set by the version that
 * introduced the marks, which left the same gap: it counts as set now (written on it, once, so the window still
 * ends), since a deploy of that version may have been going on until now; counted as old, a run it missed would
 * stay missed for good, for the price of one window of scans saved.
 */
async function marksSetAt(connection: Connection, now: Date): Promise<Date | null> {
  const Shas = testRunShaModel(connection);
  const Prs = testRunPrModel(connection);
  const marks = [
    { mark: await Shas.findById(SHAS_COMPLETE).lean<Mark>(), stamp: () => Shas.updateOne({ _id: SHAS_COMPLETE, at: { $exists: false } }, { $set: { at: now } }) },
    { mark: await Prs.findById(PRS_COMPLETE).lean<Mark>(), stamp: () => Prs.updateOne({ _id: PRS_COMPLETE, at: { $exists: false } }, { $set: { at: now } }) },
  ];
  let newest: Date | null = null;
  for (const { mark, stamp } of marks) {
    if (!mark) continue;
    if (!mark.at) await stamp();
    const at = mark.at ? new Date(mark.at) : now;
    if (!newest || at > newest) newest = at;
  }
  return newest;
}

/**
 * Gives the run a copy if it has none, or the run as it is to a copy in progress that differs from it (the previous
 * version updated the run alone). A finished copy is left: the store writes a run before its copy, so a copy never
 * finishes before its run. Answers whether it wrote.
 */
async function mendCopy(Recent: Recent, Runs: Runs, run: Run): Promise<boolean> {
  const copy = await Recent.findById(run._id).lean<Run>();
  if (copy && (copy.status !== 'in_progress' || isDeepStrictEqual(copy, run))) return false;
  // Read again by _id: the scan's may be older than a copy this version's store wrote since.
  const fresh = await Runs.findById(run._id).lean<Run>();
  if (!fresh) return false;
  if (!copy) {
    await copyRun(Recent, fresh);
    return true;
  }
  if (isDeepStrictEqual(copy, fresh)) return false;
  // Only while the copy is still in progress: one the store finished meanwhile (run, then copy) is newer than `fresh`.
  const replaced = await Recent.collection.replaceOne({ _id: run._id, status: 'in_progress' }, fresh);
  return replaced.modifiedCount > 0;
}

/**
 * During a rolling deploy from a version without the sha pointers, the recent copies and the PR pointers (before
 * f5940e0 and a1c3469), a replica of that version may still hold a queue's lease after the start-up backfills set
 * their marks: the runs it starts, gives a test branch sha, or finishes get no pointer and no copy, and those
 * backfills never look again. Its check results would find no run (`findInProgressByTestBranchSha`), the reconcile
 * (`listInProgress`) would not see it, its PRs would time out although CI passed. So, while the marks are young
 * (CATCH_UP_WINDOW_MS), this writes what is missing for every run in progress or finished within the recent window:
 * the sha pointer, the copy (or the run as it is to a stale copy in progress), the PR pointers (pointPrsAt keeps the
 * newer). One scan of test_runs, then reads by _id; after the window it reads the two marks and nothing else.
 * Called at start-up and by every prune. A run the catch-up points at a sha goes last in the pointer, after runs
 * possibly newer: readers take the newest run in progress, and two runs in progress at one sha do not happen.
 * Answers how many runs it mended.
 */
export async function catchUpRuns(connection: Connection, now: Date): Promise<number> {
  const setAt = await marksSetAt(connection, now);
  if (!setAt || now.getTime() - setAt.getTime() >= CATCH_UP_WINDOW_MS) return 0;
  const Runs = testRunModel(connection);
  const Shas = testRunShaModel(connection);
  const Recent = testRunRecentModel(connection);
  const Prs = testRunPrModel(connection);
  // Runs finished lately too: one the previous version started and finished between two catch-ups would lack its
  // copy (latestFinished, the CI history), its sha pointer (testedCommit, when its commit lands) and PR pointers.
  const since = new Date(now.getTime() - RECENT_RUNS_WINDOW_MS);
  const runs = await Runs.find({ $or: [{ status: 'in_progress' }, { finishedAt: { $gte: since } }] }).lean<Run[]>();
  let mended = 0;
  for (const run of runs) {
    let wrote = false;
    if (typeof run.testBranchSha === 'string') {
      const pointer = await Shas.findById(run.testBranchSha).lean<ShaPointer>();
      if (!(pointer?.runs ?? []).some((named) => named.runId.equals(run._id))) {
        await pointShaAt(Shas, run.testBranchSha, [{ queueId: run.queueId, runId: run._id }]);
        wrote = true;
      }
    }
    if (await mendCopy(Recent, Runs, run)) wrote = true;
    // A probe not adopted decides nothing: no PR's latest run (test-run-store.ts insert).
    if (!run.probeOf && (await pointPrsAt(Prs, run.queueId, run.testedPrNumbers ?? [], run)) > 0) wrote = true;
    if (wrote) mended++;
  }
  return mended;
}
