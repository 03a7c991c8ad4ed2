import type { Connection, Types } from 'mongoose';
import { ignoringDuplicateKey, upsertRetryingDuplicate } from './errors.js';
import { testRunModel } from './models/test-run.js';
import { testRunShaModel } from './models/test-run-sha.js';

/** A run a sha's pointer names. */
export type ShaRun = { queueId: Types.ObjectId; runId: Types.ObjectId };
/** The runs whose test branch is at `_id` (a sha), oldest first: see the model. */
export type ShaPointer = { _id: string; runs?: ShaRun[] };
type Shas = ReturnType<typeof testRunShaModel>;

/** Marks that every run with a test branch sha has its pointer; `at` says when (test-run-catch-up.ts reads it). */
export const SHAS_COMPLETE = 'complete';

/**
 * Adds runs to a sha's pointer; two first upserts at once: one inserts, the other fails on the duplicate key and
 * is retried as an update. An update is not atomic on FerretDB (it reads the document, then writes it back), but
 * one runner (the lease holder) writes a queue's runs, one after another, and two queues sharing a test commit sha
 * is practically impossible: no two writers add to one pointer at once.
 */
export async function pointShaAt(Shas: Shas, sha: string, runs: ShaRun[]): Promise<void> {
  await upsertRetryingDuplicate(() => Shas.updateOne({ _id: sha }, { $addToSet: { runs: { $each: runs } } }, { upsert: true }));
}

/**
 * Drops a deleted queue's runs from the pointers of their shas: each read and written by _id (a pointer left
 * empty goes). Not atomic either, for the reasons pointShaAt gives; pointers to runs gone are harmless anyway:
 * readers skip a run they do not find.
 */
export async function forgetQueueShas(Shas: Shas, queueId: Types.ObjectId, shas: Iterable<string>): Promise<void> {
  for (const sha of new Set(shas)) {
    const pointer = await Shas.findById(sha).lean<ShaPointer>();
    if (!pointer) continue;
    const others = (pointer.runs ?? []).filter((run) => !run.queueId.equals(queueId));
    if (others.length === 0) await Shas.deleteOne({ _id: sha });
    // The others written back: a `$pull` of `{ runs: { queueId } }` removed nothing on the local FerretDB (v1).
    else if (others.length < (pointer.runs ?? []).length) await Shas.updateOne({ _id: sha }, { $set: { runs: others } });
  }
}

/** Runs stored before pointers existed get theirs (once: later starts find the mark and do nothing). */
export async function ensureTestRunShas(connection: Connection, now = new Date()): Promise<number> {
  const Runs = testRunModel(connection);
  const Shas = testRunShaModel(connection);
  if (await Shas.exists({ _id: SHAS_COMPLETE })) return 0;
  // Oldest first, as the store adds them: readers look at the newest first.
  const runs = await Runs.find({ testBranchSha: { $ne: null } }, { _id: 1, queueId: 1, testBranchSha: 1 })
    .sort({ createdAt: 1, _id: 1 })
    .lean<Array<{ _id: Types.ObjectId; queueId: Types.ObjectId; testBranchSha: string | null }>>();
  const bySha = new Map<string, ShaRun[]>();
  let pointed = 0;
  for (const run of runs) {
    if (typeof run.testBranchSha !== 'string') continue;
    pointed++;
    bySha.set(run.testBranchSha, [...(bySha.get(run.testBranchSha) ?? []), { queueId: run.queueId, runId: run._id }]);
  }
  for (const [sha, shaRuns] of bySha) await pointShaAt(Shas, sha, shaRuns);
  // A database without runs (a new install) has nothing an older version could leave behind: no catch-up window.
  const fresh = runs.length === 0 && !(await Runs.exists({}));
  await ignoringDuplicateKey(Shas.create({ _id: SHAS_COMPLETE, at: fresh ? new Date(0) : now }));
  return pointed;
}
