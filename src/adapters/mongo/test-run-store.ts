import { createHash } from 'node:crypto';
import { Types, type Connection } from 'mongoose';
import { KeyedMutex } from '../../concurrency/keyed-mutex.js';
import { isDuplicateKeyError } from './errors.js';
import type { TestRunRecord } from '../../domain/records.js';
import type { TestRunChange, TestRunStore } from '../../ports/stores.js';
import { testRunModel } from './models/test-run.js';
import { testRunPrModel } from './models/test-run-pr.js';
import { testRunRecentModel } from './models/test-run-recent.js';
import { testRunShaModel } from './models/test-run-sha.js';
import { parseObjectId } from './object-id.js';
import { catchUpRuns } from './test-run-catch-up.js';
import { pointPrsAt, prKey, type PrPointer } from './test-run-prs.js';
import { copyRun, pruneRecentRuns, recentRunsCover } from './test-run-recent.js';
import { pointShaAt, type ShaPointer } from './test-run-shas.js';

type Doc = Omit<TestRunRecord, 'id' | 'queueId'> & { _id: Types.ObjectId; queueId: Types.ObjectId; testedPrNumbers: number[] };

function toRecord(doc: Doc): TestRunRecord {
  const { _id, queueId, testedPrNumbers: _numbers, ...rest } = doc;
  return { ...rest, id: _id.toHexString(), queueId: queueId.toHexString() };
}

/**
 * A run the engine started has an _id derived from (queue, engine run id):
 * finding it is a lookup by _id, the only one FerretDB answers from an index,
 * and inserting it twice (a replayed start) finds the first.
 */
function runObjectId(queueId: string, engineRunId: string): Types.ObjectId {
  return new Types.ObjectId(createHash('sha256').update(`${queueId}:${engineRunId}`).digest().subarray(0, 12));
}

export function mongoTestRunStore(connection: Connection): TestRunStore {
  const Runs = testRunModel(connection);
  const Shas = testRunShaModel(connection);
  // Copies of the runs in progress, finished lately, and each queue's latest: what "the queue now" reads scan (test-run-recent.ts).
  const Recent = testRunRecentModel(connection);
  const Prs = testRunPrModel(connection);
  const queueObjectId = (queueId: string) => {
    const id = parseObjectId(queueId);
    if (!id) throw new Error(`not a queue id: ${queueId}`);
    return id;
  };
  /**
   * Changes to one run, one at a time in this process. The local FerretDB applies an update by reading the document
   * and writing it back whole, so two at once can lose one; the runner makes two at once when the host-action loop
   * stores the test branch of a run that a decision is cancelling (the run stayed `in_progress`). The runner alone
   * changes runs, in the process that writes their queue.
   */
  const changes = new KeyedMutex();
  /** A run's change (see `changes`): its sha's pointer first, then the run, then its copy. */
  const updateRun = async (_id: Types.ObjectId, change: TestRunChange): Promise<void> => {
    if (typeof change.testBranchSha === 'string') {
      // The pointer first, as in insert; it names the run's queue, read here by _id.
      const run = await Runs.findById(_id, { queueId: 1 }).lean<{ queueId: Types.ObjectId }>();
      if (!run) return;
      await pointShaAt(Shas, change.testBranchSha, [{ queueId: run.queueId, runId: _id }]);
    }
    await Runs.updateOne({ _id }, { $set: change });
    // The run before its copy: a run finishing is still in progress for readers of the copies until the run says
    // otherwise, never the reverse (a failure between leaves a copy in progress, which pruning mends from the run).
    const copy = await Recent.updateOne({ _id }, { $set: change });
    if (copy.matchedCount === 0) {
      // A run with no copy (pruned, finished long ago) gets one as it is now; pruning decides whether it stays.
      const doc = await Runs.findById(_id).lean();
      if (doc) await copyRun(Recent, doc);
    }
  };

  return {
    async insert(run) {
      const _id = run.engineRunId ? runObjectId(run.queueId, run.engineRunId) : new Types.ObjectId();
      const queueId = queueObjectId(run.queueId);
      // The sha's pointer before the run: a run at a sha is always found by it (a run never stored leaves a pointer readers skip).
      if (run.testBranchSha) await pointShaAt(Shas, String(run.testBranchSha), [{ queueId, runId: _id }]);
      const doc = { ...run, _id, queueId, testedPrNumbers: run.testedPullRequests.map((pr) => pr.prNumber) };
      // The copy before the run, so a reader of the recent runs never misses a run in progress: the other way round, a
      // failure between the two would hide a run in progress from them for good. This way it leaves at worst the copy
      // of a start never stored, which the replayed start (same _id) stores.
      const copied = await Recent.create(doc).then(
        () => true,
        (error: unknown) => {
          if (isDuplicateKeyError(error)) return false;
          throw error;
        },
      );
      let stored: Doc;
      try {
        stored = (await Runs.create(doc)).toObject() as Doc;
      } catch (error) {
        const existing = isDuplicateKeyError(error) ? await Runs.findById(_id).lean<Doc>() : null;
        if (!existing) throw error;
        // A replayed start of a run whose copy was pruned (finished long ago): the copy just made is of the start, not of the run.
        if (copied) await Recent.collection.replaceOne({ _id }, existing);
        stored = existing;
      }
      // After the run, so a pointer never names a run not stored; on a replay too (a failure may have come between).
      // A probe decides nothing: its PRs' latest run stays the batch they are in until the probe is adopted.
      if (!stored.probeOf) await pointPrsAt(Prs, queueId, stored.testedPrNumbers ?? [], stored);
      return toRecord(stored);
    },
    async adoptProbe(id) {
      const _id = parseObjectId(id);
      if (!_id) return;
      await changes.run(_id.toHexString(), () => updateRun(_id, { probeOf: null }));
      // After the run says so, as in insert; repeated (a replayed decision), it moves nothing.
      const run = await Runs.findById(_id).lean<Doc>();
      if (run) await pointPrsAt(Prs, run.queueId, run.testedPrNumbers ?? [], run);
    },
    async findByEngineRunId(queueId, engineRunId) {
      const doc =
        (await Runs.findById(runObjectId(queueId, String(engineRunId))).lean<Doc>()) ??
        // Runs stored before their ids were derived.
        (await Runs.findOne({ queueId: queueObjectId(queueId), engineRunId: String(engineRunId) }).lean<Doc>());
      return doc ? toRecord(doc) : null;
    },
    async update(id, change) {
      const _id = parseObjectId(id);
      if (!_id) return;
      await changes.run(_id.toHexString(), () => updateRun(_id, change));
    },
    async findById(queueId, id) {
      const _id = parseObjectId(id);
      if (!_id) return null;
      // By _id alone (an index on FerretDB), then the queue checked here.
      const doc = await Runs.findById(_id).lean<Doc>();
      return doc && doc.queueId.toHexString() === queueObjectId(queueId).toHexString() ? toRecord(doc) : null;
    },
    async latestForPr(queueId, prNumber) {
      // Every run inserted points its PRs at itself, and runs stored before pointers existed got theirs at start-up: no pointer, no run.
      const pointer = await Prs.findById(prKey(queueObjectId(queueId), Number(prNumber))).lean<PrPointer>();
      const doc = pointer?.runId ? await Runs.findById(pointer.runId).lean<Doc>() : null;
      return doc ? toRecord(doc) : null;
    },
    async findInProgressByTestBranchSha(testBranchSha) {
      // Reads by _id only: most shas asked about are PR heads, no run's (a miss is one read of the pointer).
      const sha = String(testBranchSha);
      const pointer = await Shas.findById(sha).lean<ShaPointer>();
      // Newest first; a run gone (its queue deleted) is skipped.
      for (const { runId } of [...(pointer?.runs ?? [])].reverse()) {
        const doc = await Runs.findById(runId).lean<Doc>();
        if (doc?.status === 'in_progress' && doc.testBranchSha === sha) return toRecord(doc);
      }
      return null;
    },
    async latestFinished(queueId) {
      // Each queue's latest finished run keeps its copy whatever its age.
      const doc = await Recent.findOne({ queueId: queueObjectId(queueId), finishedAt: { $ne: null } }).sort({ finishedAt: -1, _id: -1 }).lean<Doc>();
      return doc ? toRecord(doc) : null;
    },
    async testedCommit(queueId, sha) {
      // The pointer names each run's queue: one read by _id, no run read.
      const queue = queueObjectId(queueId);
      const pointer = await Shas.findById(String(sha)).lean<ShaPointer>();
      return (pointer?.runs ?? []).some((run) => run.queueId.equals(queue));
    },
    async listInProgress() {
      const docs = await Recent.find({ status: 'in_progress' }).lean<Doc[]>();
      return docs.map(toRecord);
    },
    async listBuiltOn(queueId, baseSha) {
      // From the copies: runs in progress, and passed ones lately (a base a run passed on long ago has moved since, as it landed).
      const docs = await Recent.find({ queueId: queueObjectId(queueId), baseSha: String(baseSha), status: { $in: ['in_progress', 'succeeded'] } }).lean<Doc[]>();
      return docs.map(toRecord).filter((run) => run.testBranchSha !== null);
    },
    async countInProgress(queueId) {
      return Recent.countDocuments({ queueId: queueObjectId(queueId), status: 'in_progress' });
    },
    async listFinishedSince(queueId, since) {
      const filter = { queueId: queueObjectId(queueId), finishedAt: { $gte: since } };
      // Within the window (the runner's CI history, metrics, dashboard updates) from the copies; further back (a report over days) from every run.
      const docs = recentRunsCover(since, new Date()) ? await Recent.find(filter).lean<Doc[]>() : await Runs.find(filter).lean<Doc[]>();
      return docs.map(toRecord);
    },
    async prune(now) {
      // While a rolling deploy from a version without pointers and copies may still leave runs without them (a day
      // after the marks); first, so that a copy it writes of a run finished meanwhile is mended by the pruning.
      await catchUpRuns(connection, now);
      await pruneRecentRuns(connection, now);
    },
  };
}
