import type { Connection, Types } from 'mongoose';
import { ignoringDuplicateKey } from './errors.js';
import { testRunModel } from './models/test-run.js';
import { testRunPrModel } from './models/test-run-pr.js';
import { testRunRecentModel } from './models/test-run-recent.js';
import { pointPrsAt } from './test-run-prs.js';

/**
 * Every run finished this recently has its copy among the recent runs, so `listFinishedSince` reads them for any
 * `since` within it. An hour longer than the runner's CI history (24 h), so its `since` (its now − 24 h, taken a
 * moment before the store looks at the clock) always falls inside.
 */
export const RECENT_RUNS_WINDOW_MS = 25 * 60 * 60 * 1000;
/** Pruning keeps an hour more than the window: the replica pruning may have a clock a little ahead of a reader's. */
const PRUNE_MARGIN_MS = 60 * 60 * 1000;
/**
 * Marks (in test_run_prs) that every run stored has its PR pointers and the recent runs their copies; `at` says when
 * (test-run-catch-up.ts reads it).
 */
export const PRS_COMPLETE = 'complete';

type Recent = ReturnType<typeof testRunRecentModel>;
type Brief = { _id: Types.ObjectId; queueId: Types.ObjectId; status: string; finishedAt: Date | null; createdAt: Date; testedPrNumbers?: number[] };

/** Whether the recent runs hold every run of a queue finished since `since`. */
export function recentRunsCover(since: Date, now: Date): boolean {
  return since.getTime() >= now.getTime() - RECENT_RUNS_WINDOW_MS;
}

/** Copies a stored run as it is (same _id); a copy already there is kept: the store updates both alike. */
export async function copyRun(Recent: Recent, doc: object): Promise<void> {
  await ignoringDuplicateKey(Recent.collection.insertOne(doc as never));
}

/** The run each queue finished last, by finishedAt then _id, as `latestFinished` sorts. */
function latestFinishedByQueue(runs: Brief[]): Map<string, Brief> {
  const latest = new Map<string, Brief>();
  for (const run of runs) {
    if (!run.finishedAt) continue;
    const queue = run.queueId.toHexString();
    const known = latest.get(queue);
    const [mine, theirs] = [new Date(run.finishedAt).getTime(), known ? new Date(known.finishedAt as Date).getTime() : -Infinity];
    if (!known || mine > theirs || (mine === theirs && run._id.toHexString() > known._id.toHexString())) latest.set(queue, run);
  }
  return latest;
}

/** Which runs the recent runs keep at `now` (pruning and the backfill agree). */
function keptAt(runs: Brief[], now: Date): Set<string> {
  const since = now.getTime() - RECENT_RUNS_WINDOW_MS - PRUNE_MARGIN_MS;
  const kept = new Set([...latestFinishedByQueue(runs).values()].map((run) => run._id.toHexString()));
  for (const run of runs) {
    if (run.status === 'in_progress' || (run.finishedAt && new Date(run.finishedAt).getTime() >= since)) kept.add(run._id.toHexString());
  }
  return kept;
}

/**
 * Forgets the copies of runs finished before the window, each queue's latest finished excepted, each deleted by
 * _id (a scan of the recent runs only). A copy still in progress whose run has finished (the store writes the run,
 * then the copy: a failure between leaves the copy behind) takes the run as it is, read by _id. A copy whose run
 * is missing is left: it may be a start whose run is being inserted (the copy goes first).
 */
export async function pruneRecentRuns(connection: Connection, now: Date): Promise<number> {
  const Recent = testRunRecentModel(connection);
  const Runs = testRunModel(connection);
  const copies = await Recent.find({}, { _id: 1, queueId: 1, status: 1, finishedAt: 1, createdAt: 1 }).lean<Brief[]>();
  for (const copy of copies) {
    if (copy.status !== 'in_progress') continue;
    const run = await Runs.findById(copy._id).lean<Brief>();
    if (!run || run.status === 'in_progress') continue;
    await Recent.collection.replaceOne({ _id: copy._id }, run);
    Object.assign(copy, { status: run.status, finishedAt: run.finishedAt });
  }
  const kept = keptAt(copies, now);
  let pruned = 0;
  for (const copy of copies) {
    if (kept.has(copy._id.toHexString())) continue;
    await Recent.deleteOne({ _id: copy._id });
    pruned++;
  }
  return pruned;
}

/**
 * Runs stored before the recent runs and PR pointers existed get their copies and pointers (once: later starts
 * find the mark and read nothing). One scan of test_runs, the runs copied then read by _id.
 */
export async function ensureRecentRuns(connection: Connection, now = new Date()): Promise<number> {
  const Runs = testRunModel(connection);
  const Recent = testRunRecentModel(connection);
  const Prs = testRunPrModel(connection);
  if (await Prs.exists({ _id: PRS_COMPLETE })) return 0;
  const runs = await Runs.find({}, { _id: 1, queueId: 1, status: 1, finishedAt: 1, createdAt: 1, testedPrNumbers: 1 }).lean<Brief[]>();
  const kept = keptAt(runs, now);
  for (const run of runs) {
    if (!kept.has(run._id.toHexString())) continue;
    const doc = await Runs.findById(run._id).lean();
    if (doc) await copyRun(Recent, doc);
  }
  // Each PR's newest run (pointPrsAt keeps the newer of two).
  const newest = new Map<string, { queueId: Types.ObjectId; prNumber: number; run: Brief }>();
  for (const run of runs) {
    for (const prNumber of run.testedPrNumbers ?? []) {
      const key = `${run.queueId.toHexString()}:${prNumber}`;
      const known = newest.get(key)?.run;
      const newer = !known || run.createdAt > known.createdAt || (run.createdAt.getTime() === known.createdAt.getTime() && run._id.toHexString() > known._id.toHexString());
      if (newer) newest.set(key, { queueId: run.queueId, prNumber, run });
    }
  }
  for (const { queueId, prNumber, run } of newest.values()) await pointPrsAt(Prs, queueId, [prNumber], run);
  // A database without runs (a new install) has nothing an older version could leave behind: no catch-up window.
  await ignoringDuplicateKey(Prs.create({ _id: PRS_COMPLETE, at: runs.length === 0 ? new Date(0) : now }));
  return kept.size;
}
