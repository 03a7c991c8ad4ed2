import { Types, type Connection } from 'mongoose';
import type { EngineState } from '../../engine/model.js';
import type { DecisionCursors, EngineStore, StoredDecision } from '../../ports/engine-store.js';
import type { InboxItem, RunnerAction, RunnerInput } from '../../runner/runner-model.js';
import { isDuplicateKeyError, isServerAnswer } from './errors.js';
import { GroupedWrites } from './grouped-writes.js';
import { engineModels } from './models/engine.js';
import { idAfter, parseObjectId } from './object-id.js';

type SnapshotDoc = { _id: string; queueId: string; version: number; stateJson: string };
type DecisionDoc = { _id: string; queueId: string; version: number; epoch: number; itemsJson: string; actionsJson: string; together?: boolean };
/** One cursor (`version`), or both in the document keyed by the bare queue id, as stored before. */
type CursorDoc = { _id: string; version?: number; recordedThrough?: number; actedThrough?: number };
type LegacyStateDoc = { _id: string; stateJson: string; outboxJson: string; epoch: number };
/** `eventJson`: inbox entries written before the runner had inputs of its own. */
type InboxDoc = { _id: Types.ObjectId; queueId: string; inputJson?: string; eventJson?: string; at: number };
type LeaseDoc = { _id: string; epoch: number; owner: string; expiresAt: number };

const key = (queueId: string, version: number) => `${queueId}:${version}`;
const cursorKey = (queueId: string, cursor: keyof DecisionCursors) => `${queueId}/${cursor}`;

function toDecision(doc: DecisionDoc): StoredDecision {
  return {
    queueId: doc.queueId,
    version: doc.version,
    epoch: doc.epoch,
    items: JSON.parse(doc.itemsJson) as InboxItem[],
    actions: JSON.parse(doc.actionsJson) as RunnerAction[],
    ...(doc.together ? { together: true as const } : {}),
  };
}

export function mongoEngineStore(connection: Connection): EngineStore {
  const { snapshots: Snapshots, decisions: Decisions, cursors: Cursors, legacyStates: LegacyStates, inbox: Inbox, leases: Leases } = engineModels(connection);

  /** A queue stored in the old whole-state format becomes snapshot 0, its unfinished actions decision 1. */
  async function migrateLegacy(queueId: string): Promise<boolean> {
    const legacy = await LegacyStates.findById(queueId).lean<LegacyStateDoc>();
    if (!legacy) return false;
    const state = JSON.parse(legacy.stateJson) as EngineState;
    const outbox = JSON.parse(legacy.outboxJson) as RunnerAction[];
    await store.saveSnapshot(queueId, { version: 0, state });
    if (outbox.length > 0) await store.append({ queueId, version: 1, epoch: legacy.epoch, items: [], actions: outbox });
    await LegacyStates.deleteOne({ _id: queueId });
    return true;
  }

  // Inputs of concurrent requests enter the inbox in groups, in the order they were given (see GroupedWrites).
  const inboxInserts = new GroupedWrites<InboxDoc>(
    (docs) => Inbox.insertMany(docs),
    (doc) => Inbox.create(doc),
    async (doc) => (await Inbox.exists({ _id: doc._id })) !== null,
  );

  /** Whether this process has grouped the snapshots by queue once (see `queueIds`). */
  let snapshotsGrouped = false;

  /** Queues whose cursors this process carried over from the one-document form (see `cursors`). */
  const cursorsCarriedOver = new Set<string>();

  const store: EngineStore = {
    async load(queueId) {
      for (let attempt = 1; ; attempt++) {
        let snapshot = await Snapshots.findOne({ queueId }).sort({ version: -1 }).lean<SnapshotDoc>();
        if (!snapshot && (await migrateLegacy(queueId))) snapshot = await Snapshots.findOne({ queueId }).sort({ version: -1 }).lean<SnapshotDoc>();
        if (!snapshot) return null;
        const docs = await Decisions.find({ queueId, version: { $gt: snapshot.version } }).sort({ version: 1 }).lean<DecisionDoc[]>();
        // A newer snapshot stored between the two reads may have let its compaction take decisions after this one
        // (it deletes the older snapshots first, then the decisions they cover, not all at once on every database):
        // the log read may then start past the snapshot, have a hole, or end early, even be empty. Read again from
        // the newer snapshot: unless the one read is still there, which says no such compaction began before the log was read.
        const hole = docs.findIndex((doc, index) => doc.version !== snapshot.version + 1 + index);
        const compacted = hole === -1 && !(await Snapshots.exists({ _id: key(queueId, snapshot.version) }));
        if ((hole !== -1 || compacted) && attempt < 5) continue;
        if (hole !== -1) throw new Error(`the log of queue ${queueId} has no version ${snapshot.version + 1 + hole} after its newest snapshot's ${snapshot.version}`);
        if (compacted) throw new Error(`the newest snapshot of queue ${queueId} (version ${snapshot.version}) was compacted away five times while it was read`);
        return { snapshot: { version: snapshot.version, state: JSON.parse(snapshot.stateJson) as EngineState }, decisions: docs.map(toDecision) };
      }
    },
    async append(decision) {
      try {
        await Decisions.create({
          _id: key(decision.queueId, decision.version),
          queueId: decision.queueId,
          version: decision.version,
          epoch: decision.epoch,
          itemsJson: JSON.stringify(decision.items),
          actionsJson: JSON.stringify(decision.actions),
          ...(decision.together ? { together: true } : {}),
          createdAt: new Date(),
        });
        return true;
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        // An error the server answered (a write concern not met, a step-down) says the write is not known durable: a
        // copy found now could be rolled back. Only a lost answer (a reset connection, a time-out) is looked up.
        if (isServerAnswer(error)) throw error;
        // The write may have been applied and only its answer lost: the version's document, as a majority holds it,
        // says. Ours (this writer's epoch) is stored; another writer's means this one lost the race.
        const found = await Decisions.findById(key(decision.queueId, decision.version))
          .setOptions({ readConcern: { level: 'majority' } })
          .lean<{ epoch: number }>()
          .catch(() => null);
        if (found) return found.epoch === decision.epoch;
        throw error;
      }
    },
    async saveSnapshot(queueId, snapshot) {
      // Serialized before the first await, as the port promises: the runner goes on changing the state meanwhile.
      const stateJson = JSON.stringify(snapshot.state);
      try {
        await Snapshots.create({ _id: key(queueId, snapshot.version), queueId, version: snapshot.version, stateJson, createdAt: new Date() });
      } catch (error) {
        // Same version, same state (decide is deterministic): the other copy stands.
        if (!isDuplicateKeyError(error)) throw error;
      }
    },
    async decisionsAfter(queueId, afterVersion, limit) {
      const docs = await Decisions.find({ queueId, version: { $gt: afterVersion } }).sort({ version: 1 }).limit(limit).lean<DecisionDoc[]>();
      return docs.map(toDecision);
    },
    async cursors(queueId) {
      // Cursors stored before, both in one document: carried over once, then that document is gone.
      if (!cursorsCarriedOver.has(queueId)) {
        const before = await Cursors.findById(queueId).lean<CursorDoc>();
        if (before) {
          await store.advanceCursor(queueId, 'recordedThrough', before.recordedThrough ?? 0);
          await store.advanceCursor(queueId, 'actedThrough', before.actedThrough ?? 0);
          await Cursors.deleteOne({ _id: queueId });
        }
        cursorsCarriedOver.add(queueId);
      }
      const [recorded, acted] = await Promise.all([
        Cursors.findById(cursorKey(queueId, 'recordedThrough')).lean<CursorDoc>(),
        Cursors.findById(cursorKey(queueId, 'actedThrough')).lean<CursorDoc>(),
      ]);
      return { recordedThrough: recorded?.version ?? 0, actedThrough: acted?.version ?? 0 };
    },
    async advanceCursor(queueId, cursor, version) {
      // $max: a writer that lost the lease and writes late cannot move a cursor back.
      const advance = () => Cursors.updateOne({ _id: cursorKey(queueId, cursor) }, { $max: { version } }, { upsert: true });
      // Two first upserts at once: one inserts, the other hits the unique _id and updates what is there now.
      await advance().catch((error: unknown) => {
        if (!isDuplicateKeyError(error)) throw error;
        return advance();
      });
    },
    async compact(queueId, version) {
      const keep = await Snapshots.findOne({ queueId, version: { $lte: version } }).sort({ version: -1 }).lean<SnapshotDoc>();
      if (!keep) return;
      await Snapshots.deleteMany({ queueId, version: { $lt: keep.version } });
      await Decisions.deleteMany({ queueId, version: { $lte: keep.version } });
    },
    async remove(queueId) {
      await Snapshots.deleteMany({ queueId });
      await Decisions.deleteMany({ queueId });
      await Cursors.deleteMany({ _id: { $in: [queueId, cursorKey(queueId, 'recordedThrough'), cursorKey(queueId, 'actedThrough')] } });
      await LegacyStates.deleteOne({ _id: queueId });
      await Inbox.deleteMany({ queueId });
      await Leases.deleteMany({ queueId });
    },
    async queueIds() {
      // Every queue with a state has had a writer, so a lease document (a few small ones per queue): grouping those
      // finds them. Grouping the snapshots instead reads every stored state whole on the local FerretDB (megabytes
      // for long queues), which each replica's sweep did every few seconds; it is done once per process, for states
      // stored before leases were kept.
      const [leased, snapshotted, legacy] = await Promise.all([
        Leases.aggregate<{ _id: string }>([{ $group: { _id: '$queueId' } }]),
        snapshotsGrouped ? Promise.resolve([]) : Snapshots.aggregate<{ _id: string }>([{ $group: { _id: '$queueId' } }]),
        LegacyStates.find({}, { _id: 1 }).lean<{ _id: string }[]>(),
      ]);
      snapshotsGrouped = true;
      return [...new Set([...leased.map((g) => g._id), ...snapshotted.map((g) => g._id), ...legacy.map((d) => d._id)])];
    },
    async enqueue(queueId, item, options = {}) {
      const doc = { _id: idAfter(options.after === undefined ? null : parseObjectId(options.after)), queueId, inputJson: JSON.stringify(item.input), at: item.at };
      await inboxInserts.write(doc);
      return doc._id.toHexString();
    },
    async pending(queueId, limit) {
      const docs = await Inbox.find({ queueId }).sort({ _id: 1 }).limit(limit).lean<InboxDoc[]>();
      return docs.map((d) => ({
        id: d._id.toHexString(),
        queueId: d.queueId,
        input: JSON.parse(d.inputJson ?? d.eventJson ?? 'null') as RunnerInput,
        at: d.at,
      }));
    },
    async acknowledge(ids) {
      if (ids.length > 0) await Inbox.deleteMany({ _id: { $in: ids } });
    },
    async queuesWithPendingEvents() {
      const groups = await Inbox.aggregate<{ _id: string }>([{ $group: { _id: '$queueId' } }]);
      return groups.map((g) => g._id);
    },
    async acquireLease(queueId, owner, now, ttlMs) {
      const latest = await Leases.findOne({ queueId }).sort({ epoch: -1 }).lean<LeaseDoc>();
      if (latest && latest.owner !== owner && latest.expiresAt > now) return null;
      const epoch = (latest?.epoch ?? 0) + 1;
      try {
        await Leases.create({ _id: key(queueId, epoch), queueId, epoch, owner, expiresAt: now + ttlMs });
      } catch (error) {
        if (isDuplicateKeyError(error)) return null; // Another replica took this epoch first.
        throw error;
      }
      // Old epochs are history; keep a few for diagnosis.
      await Leases.deleteMany({ queueId, epoch: { $lt: epoch - 3 } });
      return epoch;
    },
    async releaseLease(queueId, owner, now) {
      const latest = await Leases.findOne({ queueId }).sort({ epoch: -1 }).lean<LeaseDoc>();
      if (!latest || latest.owner !== owner || latest.expiresAt <= now) return;
      try {
        // An expired epoch of our own: the next writer may take the one after it.
        await Leases.create({ _id: key(queueId, latest.epoch + 1), queueId, epoch: latest.epoch + 1, owner, expiresAt: now });
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
    },
  };
  return store;
}
