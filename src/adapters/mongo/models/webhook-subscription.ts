import { Schema, type Connection } from 'mongoose';

const signingSecretSchema = new Schema(
  { sealed: { type: String, required: true }, createdAt: { type: Date, required: true }, expiresAt: { type: Date, default: null } },
  { _id: false },
);

/**
 * Outgoing webhook subscriptions. Signing secrets are sealed (AES-256-GCM):
 * HMAC signing needs the raw secret, so a one-way hash cannot be kept instead.
 */
const webhookSubscriptionSchema = new Schema(
  {
    _id: { type: String, required: true },
    host: { type: String, required: true },
    owner: { type: String, required: true },
    orgKey: { type: String, required: true },
    // null: every repository of the organization.
    repo: { type: Schema.Types.Mixed, default: null },
    url: { type: String, required: true },
    // null: every event type (Mixed, because mongoose would turn a null array into []).
    eventTypes: { type: Schema.Types.Mixed, default: null },
    description: { type: String, default: null },
    secrets: { type: [signingSecretSchema], default: [] },
    disabledReason: { type: String, default: null },
    disabledAt: { type: Date, default: null },
    failingSince: { type: Date, default: null },
    consecutiveFailures: { type: Number, default: 0 },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { collection: 'webhook_subscriptions', versionKey: false },
);
webhookSubscriptionSchema.index({ orgKey: 1, createdAt: 1 });
webhookSubscriptionSchema.index({ disabledReason: 1, orgKey: 1 });

export function webhookSubscriptionModel(connection: Connection) {
  return connection.model('OutgoingWebhookSubscription', webhookSubscriptionSchema);
}
