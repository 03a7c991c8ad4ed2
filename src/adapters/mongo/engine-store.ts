import type { Connection, Types } from 'mongoose';
import type { EngineAction, EngineEvent, EngineState } from '../../engine/model.js';
import type { EngineStore } from '../../ports/engine-store.js';
import { isDuplicateKeyError } from './errors.js';
import { engineModels } from './models/engine.js';

type StateDoc = { _id: string; stateJson: string; outboxJson: string; epoch: number };
type InboxDoc = { _id: Types.ObjectId; queueId: string; eventJson: string; at: number };
type LeaseDoc = { _id: string; epoch: number; owner: string; expiresAt: number };

export function mongoEngineStore(connection: Connection): EngineStore {
  const { states: States, inbox: Inbox, leases: Leases } = engineModels(connection);

  return {
    async load(queueId) {
      const doc = await States.findById(String(queueId)).lean<StateDoc>();
      if (!doc) return null;
      return {
        queueId,
        state: JSON.parse(doc.stateJson) as EngineState,
        outbox: JSON.parse(doc.outboxJson) as EngineAction[],
        epoch: doc.epoch,
      };
    },
    async save(record) {
      const current = await States.findById(record.queueId).lean<StateDoc>();
      if (current && current.epoch > record.epoch) return false;
      await States.updateOne(
        { _id: record.queueId },
        { $set: { stateJson: JSON.stringify(record.state), outboxJson: JSON.stringify(record.outbox), epoch: record.epoch, updatedAt: new Date() } },
        { upsert: true },
      );
      return true;
    },
    async remove(queueId) {
      await States.deleteOne({ _id: String(queueId) });
      await Inbox.deleteMany({ queueId: String(queueId) });
      await Leases.deleteMany({ queueId: String(queueId) });
    },
    async queueIds() {
      const docs = await States.find({}, { _id: 1 }).lean<{ _id: string }[]>();
      return docs.map((d) => d._id);
    },
    async enqueue(queueId, event: EngineEvent, at) {
      await Inbox.create({ queueId, eventJson: JSON.stringify(event), at });
    },
    async pending(queueId, limit) {
      const docs = await Inbox.find({ queueId: String(queueId) }).sort({ _id: 1 }).limit(limit).lean<InboxDoc[]>();
      return docs.map((d) => ({ id: d._id.toHexString(), queueId: d.queueId, event: JSON.parse(d.eventJson) as EngineEvent, at: d.at }));
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
        await Leases.create({ _id: `${queueId}:${epoch}`, queueId, epoch, owner, expiresAt: now + ttlMs });
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
        await Leases.create({ _id: `${queueId}:${latest.epoch + 1}`, queueId, epoch: latest.epoch + 1, owner, expiresAt: now });
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
    },
  };
}
