import { Schema, type Connection } from 'mongoose';
import type { DeliveryStore } from '../../ports/delivery-store.js';
import { isDuplicateKeyError } from './errors.js';

const deliverySchema = new Schema(
  { _id: { type: String, required: true }, receivedAt: { type: Date, required: true } },
  { collection: 'webhook_deliveries', versionKey: false },
);
deliverySchema.index({ receivedAt: 1 });

export function mongoDeliveryStore(connection: Connection): DeliveryStore {
  const Deliveries = connection.model('WebhookDelivery', deliverySchema);
  return {
    async claim(deliveryId, at) {
      try {
        await Deliveries.create({ _id: String(deliveryId), receivedAt: at });
        return true;
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
    },
    async release(deliveryId) {
      await Deliveries.deleteOne({ _id: String(deliveryId) });
    },
    async prune(before) {
      await Deliveries.deleteMany({ receivedAt: { $lt: before } });
    },
  };
}
