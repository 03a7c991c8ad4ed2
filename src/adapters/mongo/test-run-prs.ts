import type { Types } from 'mongoose';
import { upsertRetryingDuplicate } from './errors.js';
import { testRunPrModel } from './models/test-run-pr.js';

/** The newest run that tested a PR: see the model. */
export type PrPointer = { _id: string; runId?: Types.ObjectId; createdAt?: Date };
type Prs = ReturnType<typeof testRunPrModel>;
type PointedRun = { _id: Types.ObjectId; createdAt: Date };

export const prKey = (queueId: Types.ObjectId, prNumber: number): string => `${queueId.toHexString()}:${prNumber}`;

/** Newer in the order the query this replaces sorted by: createdAt, then _id. */
function isNewer(run: PointedRun, pointer: PrPointer): boolean {
  if (!pointer.runId || !pointer.createdAt) return true;
  const [mine, theirs] = [run.createdAt.getTime(), new Date(pointer.createdAt).getTime()];
  return mine !== theirs ? mine > theirs : run._id.toHexString() > pointer.runId.toHexString();
}

/**
 * Points each PR's pointer at the run unless it names a newer one. Not "the last insert wins": the runner inserts
 * every run twice (with its decision, then again in the background when it starts it), and another run of the PR
 * may have been inserted between the two. The read then the write are not atomic, but one runner (the lease
 * holder) inserts a queue's runs, one after another; two first upserts at once (the start-up backfill beside
 * another replica's runner) are retried as updates, as pointShaAt does. Answers how many pointers it moved.
 */
export async function pointPrsAt(Prs: Prs, queueId: Types.ObjectId, prNumbers: Iterable<number>, run: PointedRun): Promise<number> {
  let moved = 0;
  for (const prNumber of new Set(prNumbers)) {
    const _id = prKey(queueId, prNumber);
    const pointer = await Prs.findById(_id).lean<PrPointer>();
    if (pointer && !isNewer(run, pointer)) continue;
    await upsertRetryingDuplicate(() => Prs.updateOne({ _id }, { $set: { runId: run._id, createdAt: run.createdAt } }, { upsert: true }));
    moved++;
  }
  return moved;
}

/** A deleted queue's pointers (a scan of the pointers, but a queue is rarely deleted). */
export async function forgetQueuePrs(Prs: Prs, queueId: Types.ObjectId): Promise<void> {
  // The id is an ObjectId's hex: the pattern holds no operator of a caller's.
  await Prs.deleteMany({ _id: { $regex: `^${queueId.toHexString()}:` } });
}
