import { createHash } from 'node:crypto';
import { Types, type Connection } from 'mongoose';
import { isDuplicateKeyError } from './errors.js';
import type { TestRunRecord } from '../../domain/records.js';
import type { TestRunStore } from '../../ports/stores.js';
import { testRunModel } from './models/test-run.js';
import { parseObjectId } from './object-id.js';

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
  const queueObjectId = (queueId: string) => {
    const id = parseObjectId(queueId);
    if (!id) throw new Error(`not a queue id: ${queueId}`);
    return id;
  };

  return {
    async insert(run) {
      const _id = run.engineRunId ? runObjectId(run.queueId, run.engineRunId) : new Types.ObjectId();
      try {
        const doc = await Runs.create({
          ...run,
          _id,
          queueId: queueObjectId(run.queueId),
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
      if (_id) await Runs.updateOne({ _id }, { $set: change });
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
      const doc = await Runs.findOne({ testBranchSha: String(testBranchSha), status: 'in_progress' }).lean<Doc>();
      return doc ? toRecord(doc) : null;
    },
    async latestFinished(queueId) {
      const doc = await Runs.findOne({ queueId: queueObjectId(queueId), finishedAt: { $ne: null } }).sort({ finishedAt: -1, _id: -1 }).lean<Doc>();
      return doc ? toRecord(doc) : null;
    },
    async testedCommit(queueId, sha) {
      return (await Runs.exists({ queueId: queueObjectId(queueId), testBranchSha: String(sha) })) !== null;
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
