import { LRUCache } from 'lru-cache';
import { KeyedMutex } from '../../concurrency/keyed-mutex.js';
import { SharedReads } from '../../concurrency/shared-reads.js';
import type { Connection, Types } from 'mongoose';
import { withStoredDefaults, type QueueConfig } from '../../domain/queue-config.js';
import type { RequestedQueueState } from '../../domain/queue-state.js';
import type { HostOutage, QueueFileSource, QueueRecord } from '../../domain/records.js';
import { orgKey, repoKey, type RepoRef } from '../../domain/repo.js';
import type { QueueStore } from '../../ports/stores.js';
import { isDuplicateKeyError } from './errors.js';
import { impactedTargetModels } from './models/impacted-targets.js';
import { queueEntryKeyModel, queueEntryModel } from './models/queue-entry.js';
import { queueModel } from './models/queue.js';
import { testRunModel } from './models/test-run.js';
import { testRunPrModel } from './models/test-run-pr.js';
import { testRunRecentModel } from './models/test-run-recent.js';
import { testRunShaModel } from './models/test-run-sha.js';
import { parseObjectId } from './object-id.js';
import { forgetQueuePrs } from './test-run-prs.js';
import { forgetQueueShas } from './test-run-shas.js';

type Doc = {
  _id: Types.ObjectId;
  repo: RepoRef;
  targetBranch: string;
  config: QueueConfig & { requiredStatuses?: string[] | null };
  requestedState: RequestedQueueState;
  modeSwitchStartedAt?: Date | null;
  hostOutage?: HostOutage | null;
  landingBlocked?: HostOutage | null;
  stalled?: HostOutage | null;
  configFile?: QueueFileSource | null;
  hostRepoId?: string | null;
  createdAt: Date;
  updatedAt: Date;
};

function toRecord(doc: Doc): QueueRecord {
  const { requiredStatuses, ...config } = doc.config;
  return {
    id: doc._id.toHexString(),
    repo: { host: doc.repo.host, owner: doc.repo.owner, name: doc.repo.name },
    targetBranch: doc.targetBranch,
    // Queues stored before the stall alert (and the others) existed have the defaults.
    config: { ...withStoredDefaults(config), ...(requiredStatuses ? { requiredStatuses } : {}) },
    requestedState: doc.requestedState,
    modeSwitchStartedAt: doc.modeSwitchStartedAt ?? null,
    hostOutage: doc.hostOutage?.since ? { since: doc.hostOutage.since, message: doc.hostOutage.message } : null,
    landingBlocked: doc.landingBlocked?.since ? { since: doc.landingBlocked.since, message: doc.landingBlocked.message, ...(doc.landingBlocked.nextTryAt ? { nextTryAt: doc.landingBlocked.nextTryAt } : {}) } : null,
    stalled: doc.stalled?.since ? { since: doc.stalled.since, message: doc.stalled.message } : null,
    configFile: doc.configFile?.commitSha ? { path: doc.configFile.path, commitSha: doc.configFile.commitSha, appliedAt: doc.configFile.appliedAt } : null,
    hostRepoId: doc.hostRepoId ?? null,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

export function mongoQueueStore(connection: Connection): QueueStore {
  const Queues = queueModel(connection);
  const Entries = queueEntryModel(connection);
  const EntryKeys = queueEntryKeyModel(connection);
  const Runs = testRunModel(connection);
  const RunShas = testRunShaModel(connection);
  const RecentRuns = testRunRecentModel(connection);
  const RunPrs = testRunPrModel(connection);
  const Targets = impactedTargetModels(connection);
  /** Records read by repository and branch, with when they were read (see `find`'s maxAgeMs). */
  const recent = new LRUCache<string, { record: QueueRecord; readAt: number }>({ max: 1000 });
  const recentKey = (repo: RepoRef, targetBranch: string) => `${repoKey(repo)}\n${targetBranch}`;
  /**
   * Reads under way, shared by callers that accept a recent record (64 concurrent submits whose record just
   * aged out make one read, not 64). Any change of a queue starts a new generation: a read begun before it
   * is neither shared nor remembered after it.
   */
  const reading = new SharedReads<string, QueueRecord | null>();
  /**
   * Changes to one queue record, one at a time in this process. It has two writers: the operator's settings and
   * state (queue-service), and the notes its runner keeps on it (an outage, a blocked landing, a stall, a mode
   * switch). The local FerretDB applies an update by reading the document and writing it back whole, so two at
   * once could lose one: an operator's new settings were once lost to a note. (Across replicas this holds only on
   * MongoDB, whose updates are atomic per document.)
   */
  const changes = new KeyedMutex();
  let generation = 0;
  const changed = () => {
    generation++;
    reading.forget();
  };

  return {
    async insert(queue) {
      try {
        const doc = await Queues.create({
          ...queue,
          repoKey: repoKey(queue.repo),
          orgKey: orgKey(queue.repo.host, queue.repo.owner),
        });
        recent.delete(recentKey(queue.repo, queue.targetBranch));
        changed();
        return { ok: true, value: toRecord(doc.toObject() as Doc) };
      } catch (error) {
        if (isDuplicateKeyError(error)) return { ok: false, reason: 'duplicate' };
        throw error;
      }
    },
    async find(repo, targetBranch, options) {
      const key = recentKey(repo, targetBranch);
      const known = recent.get(key);
      const recentEnough = options?.maxAgeMs !== undefined;
      if (known && recentEnough && Date.now() - known.readAt <= (options.maxAgeMs as number)) return known.record;
      const read = async () => {
        const readAt = Date.now();
        const startedIn = generation;
        const doc = await Queues.findOne({ repoKey: repoKey(repo), targetBranch: String(targetBranch) }).lean<Doc>();
        const record = doc ? toRecord(doc) : null;
        if (generation === startedIn) {
          if (record) recent.set(key, { record, readAt });
          else recent.delete(key);
        }
        return record;
      };
      return recentEnough ? reading.read(key, read) : read();
    },
    async findById(id) {
      const _id = parseObjectId(id);
      const doc = _id ? await Queues.findById(_id).lean<Doc>() : null;
      return doc ? toRecord(doc) : null;
    },
    async listForOrg(host, owner, repo) {
      const filter = repo ? { repoKey: repoKey(repo) } : { orgKey: orgKey(host, owner) };
      const docs = await Queues.find(filter).sort({ repoKey: 1, targetBranch: 1 }).lean<Doc[]>();
      return docs.map(toRecord);
    },
    async update(id, change) {
      const _id = parseObjectId(id);
      if (!_id) return null;
      const set: Record<string, unknown> = { updatedAt: change.updatedAt };
      const unset: Record<string, ''> = {};
      if (change.config) {
        const { requiredStatuses, ...rest } = change.config;
        for (const [key, value] of Object.entries(rest)) set[`config.${key}`] = value;
        if (requiredStatuses) set['config.requiredStatuses'] = requiredStatuses;
        else unset['config.requiredStatuses'] = '';
      }
      if (change.requestedState) set.requestedState = change.requestedState;
      if (change.modeSwitchStartedAt !== undefined) set.modeSwitchStartedAt = change.modeSwitchStartedAt;
      if (change.hostOutage !== undefined) set.hostOutage = change.hostOutage;
      if (change.landingBlocked !== undefined) set.landingBlocked = change.landingBlocked;
      if (change.stalled !== undefined) set.stalled = change.stalled;
      if (change.configFile !== undefined) set.configFile = change.configFile;
      const update = Object.keys(unset).length > 0 ? { $set: set, $unset: unset } : { $set: set };
      const doc = await changes.run(_id.toHexString(), async () => {
        await Queues.updateOne({ _id }, update);
        changed();
        return Queues.findById(_id).lean<Doc>();
      });
      const record = doc ? toRecord(doc) : null;
      if (record) recent.delete(recentKey(record.repo, record.targetBranch));
      return record;
    },
    async listByHostRepoId(host, hostRepoId) {
      const docs = await Queues.find({ hostRepoId: String(hostRepoId) }).lean<Doc[]>();
      return docs.map(toRecord).filter((q) => q.repo.host === host);
    },
    async setHostRepoId(id, hostRepoId) {
      const _id = parseObjectId(id);
      if (!_id) return;
      await changes.run(_id.toHexString(), async () => {
        await Queues.updateOne({ _id }, { $set: { hostRepoId: String(hostRepoId) } });
        changed();
      });
      for (const [key, { record }] of [...recent.entries()]) if (record.id === id) recent.delete(key);
    },
    async moveToRepository(id, repo, at) {
      const _id = parseObjectId(id);
      const before = _id ? await Queues.findById(_id).lean<Doc>() : null;
      if (!_id || !before) return { ok: false, reason: 'not_found' };
      const moved = { repo: { host: String(repo.host), owner: String(repo.owner), name: String(repo.name) }, repoKey: repoKey(repo), orgKey: orgKey(repo.host, repo.owner), updatedAt: at };
      // Looked for first: the unique index says so too on MongoDB, but a refusal is clearer than an error.
      if (await Queues.exists({ repoKey: moved.repoKey, targetBranch: before.targetBranch, _id: { $ne: _id } })) return { ok: false, reason: 'duplicate' };
      let doc: Doc | null;
      try {
        doc = await changes.run(_id.toHexString(), async () => {
          await Queues.updateOne({ _id }, { $set: moved });
          changed();
          return Queues.findById(_id).lean<Doc>();
        });
      } catch (error) {
        if (isDuplicateKeyError(error)) return { ok: false, reason: 'duplicate' };
        throw error;
      }
      recent.delete(recentKey(before.repo, before.targetBranch));
      recent.delete(recentKey(repo, before.targetBranch));
      return doc ? { ok: true, value: toRecord(doc) } : { ok: false, reason: 'not_found' };
    },
    async delete(id) {
      const _id = parseObjectId(id);
      if (!_id) return;
      // The queue goes first: once it is gone nothing can add to what follows.
      await Queues.deleteOne({ _id });
      changed();
      for (const [key, { record }] of [...recent.entries()]) if (record.id === id) recent.delete(key);
      const sets = await Targets.sets.find({ queueId: _id }, { _id: 1 }).lean<{ _id: Types.ObjectId }[]>();
      await Targets.parts.deleteMany({ setId: { $in: sets.map((s) => s._id) } });
      await Targets.sets.deleteMany({ queueId: _id });
      // Pointers are named `<queue id>:…` (an id checked above, so the pattern holds no operator of the caller's).
      await Targets.heads.deleteMany({ _id: { $regex: `^${_id.toHexString()}:` } });
      // The runs' sha pointers before the runs, found from them (a scan, but a queue is rarely deleted).
      const shas = await Runs.find({ queueId: _id, testBranchSha: { $ne: null } }, { testBranchSha: 1 }).lean<{ testBranchSha: string | null }[]>();
      await forgetQueueShas(RunShas, _id, shas.flatMap((run) => (typeof run.testBranchSha === 'string' ? [run.testBranchSha] : [])));
      // The runs' copies (a scan of the few recent ones) and PR pointers before the runs, as their sha pointers.
      await RecentRuns.deleteMany({ queueId: _id });
      await forgetQueuePrs(RunPrs, _id);
      await Runs.deleteMany({ queueId: _id });
      await Entries.deleteMany({ queueId: _id });
      await EntryKeys.deleteMany({ queueId: _id });
    },
  };
}
