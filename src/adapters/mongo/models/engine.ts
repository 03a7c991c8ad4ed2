import { Schema, type Connection } from 'mongoose';

/**
 * The engine's state per queue, stored as JSON text: it is the engine's own
 * format (keys such as shas, nested lists), written and read whole.
 */
const engineStateSchema = new Schema(
  {
    _id: { type: String, required: true },
    stateJson: { type: String, required: true },
    outboxJson: { type: String, required: true },
    epoch: { type: Number, required: true },
    updatedAt: { type: Date, required: true },
  },
  { collection: 'queue_engine_states', versionKey: false },
);

/** Events waiting for the queue's writer; removed once applied. */
const inboxSchema = new Schema(
  {
    queueId: { type: String, required: true },
    eventJson: { type: String, required: true },
    at: { type: Number, required: true },
  },
  { collection: 'queue_inbox', versionKey: false },
);
inboxSchema.index({ queueId: 1, _id: 1 });

/** One document per lease epoch: the unique _id makes taking the lease atomic. */
const leaseSchema = new Schema(
  {
    _id: { type: String, required: true },
    queueId: { type: String, required: true },
    epoch: { type: Number, required: true },
    owner: { type: String, required: true },
    expiresAt: { type: Number, required: true },
  },
  { collection: 'queue_leases', versionKey: false },
);
leaseSchema.index({ queueId: 1, epoch: -1 });

export function engineModels(connection: Connection) {
  return {
    states: connection.model('QueueEngineState', engineStateSchema),
    inbox: connection.model('QueueInboxEvent', inboxSchema),
    leases: connection.model('QueueLease', leaseSchema),
  };
}
