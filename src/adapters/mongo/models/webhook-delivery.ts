import { Schema, type Connection } from 'mongoose';
import { WEBHOOK_DELIVERY_STATUSES } from '../../../ports/webhook-store.js';

/**
 * The outgoing webhook outbox: one row per (event, subscription). Named apart
 * from `webhook_deliveries`, which remembers incoming GitHub delivery ids.
 */
const webhookOutboxSchema = new Schema(
  {
    _id: { type: String, required: true },
    eventId: { type: String, required: true },
    subscriptionId: { type: String, required: true },
    eventType: { type: String, required: true },
    orderingKey: { type: String, required: true },
    sequence: { type: Number, required: true },
    body: { type: String, required: true },
    status: { type: String, enum: WEBHOOK_DELIVERY_STATUSES, required: true },
    attempts: { type: Number, default: 0 },
    scheduleStart: { type: Number, default: 0 },
    nextAttemptAt: { type: Date, default: null },
    lastAttemptAt: { type: Date, default: null },
    lastResponseCode: { type: Number, default: null },
    lastError: { type: String, default: null },
    createdAt: { type: Date, required: true },
    deliveredAt: { type: Date, default: null },
  },
  { collection: 'webhook_outbox', versionKey: false },
);
// A replayed publish inserts nothing: the unique key is the idempotency check.
webhookOutboxSchema.index({ eventId: 1, subscriptionId: 1 }, { unique: true });
webhookOutboxSchema.index({ status: 1, nextAttemptAt: 1 });
// Finished deliveries are forgotten after a while (pruneFinished).
webhookOutboxSchema.index({ status: 1, lastAttemptAt: 1 });
webhookOutboxSchema.index({ subscriptionId: 1, orderingKey: 1, sequence: 1 });
webhookOutboxSchema.index({ subscriptionId: 1, createdAt: -1, _id: -1 });

/**
 * Attempt claims: `_id` is `<delivery>:<attempt>:<takeover>`, so two workers
 * cannot both insert the claim of the same attempt. Updates are not atomic on
 * FerretDB; inserts under a unique key are.
 */
const webhookClaimSchema = new Schema(
  {
    _id: { type: String, required: true },
    deliveryId: { type: String, required: true },
    attempt: { type: Number, required: true },
    takeover: { type: Number, required: true },
    owner: { type: String, required: true },
    claimedAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  { collection: 'webhook_delivery_claims', versionKey: false },
);
webhookClaimSchema.index({ deliveryId: 1, attempt: 1, takeover: -1 });

export function webhookOutboxModel(connection: Connection) {
  return connection.model('OutgoingWebhookDelivery', webhookOutboxSchema);
}

export function webhookClaimModel(connection: Connection) {
  return connection.model('OutgoingWebhookDeliveryClaim', webhookClaimSchema);
}
