import { Schema, type Connection } from 'mongoose';
import { PULL_REQUEST_STATES, STATE_CHANGE_REASONS } from '../../../domain/pull-request-state.js';
import { HOST_MERGEABILITIES } from '../../../domain/records.js';

const factsSchema = new Schema(
  {
    title: String,
    author: String,
    headSha: String,
    baseBranch: String,
    open: Boolean,
    draft: Boolean,
    merged: Boolean,
    mergeability: { type: String, enum: HOST_MERGEABILITIES },
    url: String,
    body: String,
    readAt: Date,
  },
  { _id: false },
);

const timelineEventSchema = new Schema(
  {
    at: { type: Date, required: true },
    state: { type: String, enum: PULL_REQUEST_STATES, required: true },
    reason: { type: String, enum: STATE_CHANGE_REASONS, required: true },
    detail: String,
  },
  { _id: false },
);

/** One document per pull request per queue; attempts reuse it. */
const queueEntrySchema = new Schema(
  {
    queueId: { type: Schema.Types.ObjectId, required: true },
    prNumber: { type: Number, required: true },
    attempt: { type: Number, required: true },
    state: { type: String, enum: PULL_REQUEST_STATES, required: true },
    priority: { type: Number, required: true },
    noBatch: { type: Boolean, required: true },
    submittedAt: { type: Date, required: true },
    stateChangedAt: { type: Date, required: true },
    concludedAt: { type: Date, default: null },
    // Facts and timeline as JSON text (see queue-entry-store.ts); the nested forms are read from older entries.
    factsJson: { type: String, default: null },
    timelineJson: { type: String, default: '[]' },
    facts: { type: factsSchema, default: undefined },
    timeline: { type: [timelineEventSchema], default: undefined },
    /** The key of the runner's last write: a replayed write with an older key changes nothing. */
    recordedKey: { type: Number, default: 0 },
  },
  { collection: 'queue_entries', versionKey: false },
);
queueEntrySchema.index({ queueId: 1, prNumber: 1 }, { unique: true });
// Queue order (priority, then FIFO) and the enqueued/terminal filters.
queueEntrySchema.index({ queueId: 1, state: 1, priority: 1, submittedAt: 1 });
// listPullRequests pages newest first; metrics read the last hour's state changes.
queueEntrySchema.index({ queueId: 1, submittedAt: -1, _id: -1 });
queueEntrySchema.index({ queueId: 1, stateChangedAt: 1 });

export function queueEntryModel(connection: Connection) {
  return connection.model('QueueEntry', queueEntrySchema);
}

/**
 * `<queue id>:<PR number>` → entry id. Finding a PR's entry is then two lookups
 * by _id, the only ones FerretDB answers from an index (a query on queueId and
 * prNumber reads every entry of every queue). Taken before the entry is written:
 * the unique key is also what makes one entry per PR per queue. A submit's key
 * holds the entry's first record (`pending`) until the runner, the entry's one
 * writer, writes the entry in the decision that takes it in.
 */
const queueEntryKeySchema = new Schema(
  {
    _id: { type: String, required: true },
    queueId: { type: Schema.Types.ObjectId, required: true },
    entryId: { type: Schema.Types.ObjectId, required: true },
    pending: { type: Schema.Types.Mixed, default: undefined },
  },
  { collection: 'queue_entry_keys', versionKey: false },
);
queueEntryKeySchema.index({ queueId: 1 });

export function queueEntryKeyModel(connection: Connection) {
  return connection.model('QueueEntryKey', queueEntryKeySchema);
}
