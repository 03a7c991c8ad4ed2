import { Schema, type Connection } from 'mongoose';
import type { DeliveryStore, ReceivedDelivery } from '../../ports/delivery-store.js';
import { isDuplicateKeyError } from './errors.js';

const deliverySchema = new Schema(
  {
    _id: { type: String, required: true },
    name: { type: String, default: '' },
    payloadJson: { type: String, default: null },
    receivedAt: { type: Date, required: true },
    attempts: { type: Number, default: 0 },
    lastAttemptAt: { type: Date, default: null },
    lastError: { type: String, default: null },
    handledAt: { type: Date, default: null },
  },
  { collection: 'webhook_deliveries', versionKey: false },
);
deliverySchema.index({ receivedAt: 1 });
deliverySchema.index({ handledAt: 1, receivedAt: 1 });

/** One document per handling attempt: the unique _id lets one replica take each. */
const attemptSchema = new Schema({ _id: { type: String, required: true }, at: { type: Date, required: true } }, { collection: 'webhook_delivery_attempts', versionKey: false });
attemptSchema.index({ at: 1 });

type Doc = { _id: string; name: string; payloadJson: string | null; receivedAt: Date; attempts?: number; lastAttemptAt?: Date | null };

export function mongoDeliveryStore(connection: Connection): DeliveryStore {
  const Deliveries = connection.model('WebhookDelivery', deliverySchema);
  const Attempts = connection.model('WebhookDeliveryAttempt', attemptSchema);
  return {
    async record(delivery) {
      try {
        await Deliveries.create({ _id: String(delivery.id), name: delivery.name, payloadJson: delivery.payloadJson, receivedAt: delivery.receivedAt });
        return true;
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
    },
    async startAttempt(id, at) {
      const doc = await Deliveries.findById(String(id)).lean<Doc>();
      if (!doc) return false;
      const attempt = (doc.attempts ?? 0) + 1;
      await Deliveries.updateOne({ _id: String(id) }, { $set: { attempts: attempt, lastAttemptAt: at } });
      try {
        await Attempts.create({ _id: `${id}:${attempt}`, at });
        return true;
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
    },
    async handled(id, at) {
      await Deliveries.updateOne({ _id: String(id) }, { $set: { handledAt: at, payloadJson: null, lastError: null } });
    },
    async failed(id, error) {
      await Deliveries.updateOne({ _id: String(id) }, { $set: { lastError: error.slice(0, 500) } });
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
        }),
      );
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
