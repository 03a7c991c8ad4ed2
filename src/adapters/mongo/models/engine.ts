import { Schema, type Connection } from 'mongoose';

/*
 * The engine's storage: snapshots plus an append-only log of decisions. State,
 * events and actions are the engine's own formats (keys such as shas, nested
 * lists) and are stored as JSON text, written once and read whole.
 */

/** A queue's engine state at one version; `_id` is `<queue>:<version>`. */
const snapshotSchema = new Schema(
  {
    _id: { type: String, required: true },
    queueId: { type: String, required: true },
    version: { type: Number, required: true },
    stateJson: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { collection: 'queue_engine_snapshots', versionKey: false },
);
snapshotSchema.index({ queueId: 1, version: -1 });

/** One decision: `_id` is `<queue>:<version>`, so two writers cannot both append a version. */
const decisionSchema = new Schema(
  {
    _id: { type: String, required: true },
    queueId: { type: String, required: true },
    version: { type: Number, required: true },
    epoch: { type: Number, required: true },
    itemsJson: { type: String, required: true },
    actionsJson: { type: String, required: true },
    /** Its items were decided together (see StoredDecision). */
    together: { type: Boolean },
    createdAt: { type: Date, required: true },
  },
  { collection: 'queue_engine_decisions', versionKey: false },
);
decisionSchema.index({ queueId: 1, version: 1 });

/**
 * How far each queue's decisions have been carried out: one document per cursor
 * (`<queueId>/recordedThrough`, `<queueId>/actedThrough`), because the round and
 * the host-action loop advance theirs concurrently and FerretDB rewrites a whole
 * document per update (two cursors in one document could undo each other).
 * Documents keyed by the bare queue id hold both, as written before.
 */
const cursorSchema = new Schema(
  {
    _id: { type: String, required: true },
    version: { type: Number },
    recordedThrough: { type: Number },
    actedThrough: { type: Number },
  },
  { collection: 'queue_engine_cursors', versionKey: false },
);

/** The state as stored before the decision log (read once, as the first snapshot). */
const legacyStateSchema = new Schema(
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
    inputJson: { type: String, required: true },
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
    snapshots: connection.model('QueueEngineSnapshot', snapshotSchema),
    decisions: connection.model('QueueEngineDecision', decisionSchema),
    cursors: connection.model('QueueEngineCursor', cursorSchema),
    legacyStates: connection.model('QueueEngineState', legacyStateSchema),
    inbox: connection.model('QueueInboxEvent', inboxSchema),
    leases: connection.model('QueueLease', leaseSchema),
  };
}
