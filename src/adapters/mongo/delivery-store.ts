import { randomUUID } from 'node:crypto';
import { Schema, type Connection } from 'mongoose';
import { lastAttemptEnded, lastSignOfLife, type DeliveryStore, type ReceivedDelivery } from '../../ports/delivery-store.js';
import { isDuplicateKeyError } from './errors.js';
import { GroupedWrites } from './grouped-writes.js';

const deliverySchema = new Schema(
  {
    _id: { type: String, required: true },
    name: { type: String, default: '' },
    payloadJson: { type: String, default: null },
    receivedAt: { type: Date, required: true },
    attempts: { type: Number, default: 0 },
    lastAttemptAt: { type: Date, default: null },
    lastError: { type: String, default: null },
    lastFailedAt: { type: Date, default: null },
    aliveAt: { type: Date, default: null },
    handledAt: { type: Date, default: null },
    /** Names the write that recorded it (a group's write is told apart from an earlier receipt of the same id). */
    receipt: { type: String },
  },
  { collection: 'webhook_deliveries', versionKey: false },
);
deliverySchema.index({ receivedAt: 1 });
deliverySchema.index({ handledAt: 1, receivedAt: 1 });

/**
 * How long an attempt that has not ended may still be running after it last said so (its start, or DeliveryHandler's
 * heartbeat, a minute apart): a redelivery re-arms a delivery given up only once its last attempt failed or after this.
 */
const LAST_ATTEMPT_RUNS_MS = 3 * 60_000;

/** The attempts collection's document saying how far the redelivery sweep got. */
const REDELIVERY_SWEPT_TO = 'redelivery:swept-to';

/** One document per handling attempt: the unique _id lets one replica take each. */
const attemptSchema = new Schema(
  { _id: { type: String, required: true }, at: { type: Date, required: true }, claim: { type: String } },
  { collection: 'webhook_delivery_attempts', versionKey: false },
);
attemptSchema.index({ at: 1 });

type Doc = { _id: string; name: string; payloadJson: string | null; receivedAt: Date; attempts?: number; lastAttemptAt?: Date | null; lastFailedAt?: Date | null; aliveAt?: Date | null };

/** An insert under a unique key: true when written, false when the key was taken. */
async function inserted(write: Promise<void>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isDuplicateKeyError(error)) return false;
    throw error;
  }
}

export function mongoDeliveryStore(connection: Connection): DeliveryStore {
  const Deliveries = connection.model('WebhookDelivery', deliverySchema);
  const Attempts = connection.model('WebhookDeliveryAttempt', attemptSchema);
  // Deliveries arriving together, and their first attempts, go as one insert each (see GroupedWrites): a
  // delivery costs two inserts in groups, no read and no update (an update costs the local FerretDB about five
  // inserts). A document the group wrote before failing is known by the random id its write gave it. Written
  // whole: a lean insert applies no schema defaults.
  type DeliveryDoc = { _id: string; name: string; payloadJson: string; receivedAt: Date; attempts: number; lastAttemptAt: Date; lastError: null; lastFailedAt: null; aliveAt: null; handledAt: null; receipt: string };
  const deliveryInserts = new GroupedWrites<DeliveryDoc>(
    (docs) => Deliveries.insertMany(docs, { lean: true }),
    (doc) => Deliveries.insertMany([doc], { lean: true }),
    async (doc) => (await Deliveries.findById(doc._id).lean<{ receipt?: string }>())?.receipt === doc.receipt,
  );
  type AttemptDoc = { _id: string; at: Date; claim: string };
  const attemptInserts = new GroupedWrites<AttemptDoc>(
    (docs) => Attempts.insertMany(docs, { lean: true }),
    (doc) => Attempts.insertMany([doc], { lean: true }),
    async (doc) => (await Attempts.findById(doc._id).lean<AttemptDoc>())?.claim === doc.claim,
  );
  const claimAttempt: DeliveryStore['claimAttempt'] = (id, attempt, at) => inserted(attemptInserts.write({ _id: `${id}:${attempt}`, at, claim: randomUUID() }));
  return {
    record(delivery) {
      const { id, name, payloadJson, receivedAt } = delivery;
      const doc = { _id: String(id), name, payloadJson, receivedAt, attempts: 1, lastAttemptAt: receivedAt, lastError: null, lastFailedAt: null, aliveAt: null, handledAt: null, receipt: randomUUID() };
      return inserted(deliveryInserts.write(doc));
    },
    async rearm(delivery, maxAttempts) {
      const { id, name, payloadJson, receivedAt } = delivery;
      const previous = await Deliveries.findById(String(id)).lean<Doc & { handledAt?: Date | null; receipt?: string }>();
      if (!previous || previous.handledAt || (previous.attempts ?? 0) < maxAttempts) return false;
      // Its last attempt may still be running (the count moves when an attempt starts): not re-armed beside it.
      const times = { lastAttemptAt: previous.lastAttemptAt ?? null, lastFailedAt: previous.lastFailedAt ?? null, aliveAt: previous.aliveAt ?? null };
      if (!lastAttemptEnded(times) && receivedAt.getTime() - lastSignOfLife(times) < LAST_ATTEMPT_RUNS_MS) return false;
      // The gate is a key per record given up (its receipt names it), not the update: an update is not atomic on the
      // local FerretDB, a unique key is. Of replicas receiving the redelivery at once, one takes it.
      if (!(await inserted(attemptInserts.write({ _id: `${id}:rearm:${previous.receipt ?? 'before-receipts'}`, at: receivedAt, claim: randomUUID() })))) return false;
      await Deliveries.updateOne({ _id: String(id) }, { $set: { name, payloadJson, receivedAt, attempts: 1, lastAttemptAt: receivedAt, lastError: null, lastFailedAt: null, aliveAt: null, receipt: randomUUID() } });
      // Attempt 1 (and the retries after it) can be claimed again; by _id, one each (the local FerretDB reads the whole collection for `$in`).
      const used = Math.max(previous.attempts ?? 0, maxAttempts);
      for (let attempt = 1; attempt <= used; attempt++) await Attempts.deleteOne({ _id: `${id}:${attempt}` });
      return true;
    },
    claimAttempt,
    async startAttempt(id, at) {
      const doc = await Deliveries.findById(String(id)).lean<Doc>();
      if (!doc) return false;
      const attempt = (doc.attempts ?? 0) + 1;
      await Deliveries.updateOne({ _id: String(id) }, { $set: { attempts: attempt, lastAttemptAt: at } });
      return claimAttempt(id, attempt, at);
    },
    async handled(id, at) {
      await Deliveries.updateOne({ _id: String(id) }, { $set: { handledAt: at, payloadJson: null, lastError: null } });
    },
    async failed(id, error, at) {
      await Deliveries.updateOne({ _id: String(id) }, { $set: { lastError: error.slice(0, 500), lastFailedAt: at } });
    },
    async stillHandling(id, at) {
      await Deliveries.updateOne({ _id: String(id) }, { $set: { aliveAt: at } });
    },
    async unhandled(before, maxAttempts, limit) {
      const docs = await Deliveries.find({ handledAt: null, receivedAt: { $lt: before }, attempts: { $lt: maxAttempts }, payloadJson: { $ne: null } })
        .sort({ receivedAt: 1 })
        .limit(limit)
        .lean<Doc[]>();
      return docs.map(
        (d): ReceivedDelivery => ({
          id: d._id,
          name: d.name,
          payloadJson: d.payloadJson ?? '',
          receivedAt: d.receivedAt,
          attempts: d.attempts ?? 0,
          lastAttemptAt: d.lastAttemptAt ?? null,
          lastFailedAt: d.lastFailedAt ?? null,
          aliveAt: d.aliveAt ?? null,
        }),
      );
    },
    // Kept beside the attempts' claims (one small document, pruned like them if no sweep ran for a week).
    async redeliverySweptTo() {
      return (await Attempts.findById(REDELIVERY_SWEPT_TO).lean<AttemptDoc>())?.at ?? null;
    },
    async setRedeliverySweptTo(at) {
      await Attempts.updateOne({ _id: REDELIVERY_SWEPT_TO }, { $set: { at } }, { upsert: true });
    },
    async received(ids) {
      // One lookup by _id each: the failed deliveries of a sweep are few, and the local FerretDB reads the whole
      // collection for `$in`.
      const found = await Promise.all(ids.map(async (id) => ((await Deliveries.exists({ _id: String(id) })) !== null ? id : null)));
      return new Set(found.filter((id): id is string => id !== null));
    },
    async forget(id) {
      await Deliveries.deleteOne({ _id: String(id) });
    },
    async prune(before) {
      await Deliveries.deleteMany({ receivedAt: { $lt: before } });
      await Attempts.deleteMany({ at: { $lt: before } });
    },
  };
}
