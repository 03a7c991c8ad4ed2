import { createHash } from 'node:crypto';
import { Types, type Connection } from 'mongoose';
import { isDuplicateKeyError } from './errors.js';
import type { TestRunRecord } from '../../domain/records.js';
import type { TestRunStore } from '../../ports/stores.js';
import { testRunModel } from './models/test-run.js';
import { testRunShaModel } from './models/test-run-sha.js';
import { parseObjectId } from './object-id.js';
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
  const queueObjectId = (queueId: string) => {
    const id = parseObjectId(queueId);
    if (!id) throw new Error(`not a queue id: ${queueId}`);
    return id;
  };

  return {
    async insert(run) {
      const _id = run.engineRunId ? runObjectId(run.queueId, run.engineRunId) : new Types.ObjectId();
      const queueId = queueObjectId(run.queueId);
      // The sha's pointer before the run: a run at a sha is always found by it (a run never stored leaves a pointer readers skip).
      if (run.testBranchSha) await pointShaAt(Shas, String(run.testBranchSha), [{ queueId, runId: _id }]);
      try {
        const doc = await Runs.create({
          ...run,
          _id,
          queueId,
          testedPrNumbers: run.testedPullRequests.map((pr) => pr.prNumber),
        });
        return toRecord(doc.toObject() as Doc);
      } catch (error) {
        const existing = isDuplicateKeyError(error) ? await Runs.findById(_id).lean<Doc>() : null;
        if (existing) return toRecord(existing);
        throw error;
      }
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
      if (typeof change.testBranchSha === 'string') {
        // The pointer first, as in insert; it names the run's queue, read here by _id.
        const run = await Runs.findById(_id, { queueId: 1 }).lean<{ queueId: Types.ObjectId }>();
        if (!run) return;
        await pointShaAt(Shas, change.testBranchSha, [{ queueId: run.queueId, runId: _id }]);
      }
      await Runs.updateOne({ _id }, { $set: change });
    },
    async findById(queueId, id) {
      const _id = parseObjectId(id);
      if (!_id) return null;
      // By _id alone (an index on FerretDB), then the queue checked here.
      const doc = await Runs.findById(_id).lean<Doc>();
      return doc && doc.queueId.toHexString() === queueObjectId(queueId).toHexString() ? toRecord(doc) : null;
    },
    async latestForPr(queueId, prNumber) {
      const doc = await Runs.findOne({ queueId: queueObjectId(queueId), testedPrNumbers: Number(prNumber) })
        .sort({ createdAt: -1, _id: -1 })
        .lean<Doc>();
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
      const doc = await Runs.findOne({ queueId: queueObjectId(queueId), finishedAt: { $ne: null } }).sort({ finishedAt: -1, _id: -1 }).lean<Doc>();
      return doc ? toRecord(doc) : null;
    },
    async testedCommit(queueId, sha) {
      // The pointer names each run's queue: one read by _id, no run read.
      const queue = queueObjectId(queueId);
      const pointer = await Shas.findById(String(sha)).lean<ShaPointer>();
      return (pointer?.runs ?? []).some((run) => run.queueId.equals(queue));
    },
    async listInProgress() {
      const docs = await Runs.find({ status: 'in_progress' }).lean<Doc[]>();
      return docs.map(toRecord);
    },
    async listBuiltOn(queueId, baseSha) {
      const docs = await Runs.find({ queueId: queueObjectId(queueId), baseSha: String(baseSha), status: { $in: ['in_progress', 'succeeded'] } }).lean<Doc[]>();
      return docs.map(toRecord).filter((run) => run.testBranchSha !== null);
    },
    async countInProgress(queueId) {
      return Runs.countDocuments({ queueId: queueObjectId(queueId), status: 'in_progress' });
    },
    async listFinishedSince(queueId, since) {
      const docs = await Runs.find({ queueId: queueObjectId(queueId), finishedAt: { $gte: since } }).lean<Doc[]>();
      return docs.map(toRecord);
    },
  };
}
