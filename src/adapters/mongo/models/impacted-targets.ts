import { Schema, type Connection } from 'mongoose';

/**
 * Impacted targets arrive in bodies up to 20 MiB, over MongoDB's 16 MiB document
 * limit, so a set is stored as a header plus parts. The header is written last:
 * a reader that finds a header finds every part of it.
 */
const impactedTargetSetSchema = new Schema(
  {
    queueId: { type: Schema.Types.ObjectId, required: true },
    prNumber: { type: Number, required: true },
    sha: { type: String, required: true },
    all: { type: Boolean, required: true },
    count: { type: Number, required: true },
    parts: { type: Number, required: true },
    setAt: { type: Date, required: true },
    /** The parts' ids in order (sets stored before have none: their parts are found by setId). */
    partIds: { type: [Schema.Types.ObjectId], default: undefined },
  },
  { collection: 'impacted_target_sets', versionKey: false },
);
impactedTargetSetSchema.index({ queueId: 1, prNumber: 1, setAt: -1 });
impactedTargetSetSchema.index({ queueId: 1, prNumber: 1, sha: 1, setAt: -1 });

const impactedTargetPartSchema = new Schema(
  {
    setId: { type: Schema.Types.ObjectId, required: true },
    part: { type: Number, required: true },
    targets: { type: [String], required: true },
  },
  { collection: 'impacted_target_parts', versionKey: false },
);
impactedTargetPartSchema.index({ setId: 1, part: 1 }, { unique: true });

/**
 * The newest set of a PR head, under `<queue>:<pr>:<sha>`, and of the PR whatever its head, under
 * `<queue>:<pr>`: a submit or a status read finds its targets with one read by _id (the local FerretDB
 * answers any other filter by reading the whole collection, so a lookup by queue, PR and sha grew with
 * every upload stored). The document `_id: "complete"` says every set has its pointers (sets stored before
 * pointers existed get them once, at start-up).
 */
const impactedTargetHeadSchema = new Schema(
  {
    _id: { type: String, required: true },
    setId: { type: Schema.Types.ObjectId },
    prNumber: { type: Number },
    sha: { type: String },
    all: { type: Boolean },
    count: { type: Number },
    partIds: { type: [Schema.Types.ObjectId], default: undefined },
    setAt: { type: Date },
    /** In the PR's pointer: its uploads kept, newest first (pruning reads them here, not by a query). */
    uploads: { type: [{ _id: false, setId: Schema.Types.ObjectId, sha: String, partIds: { type: [Schema.Types.ObjectId], default: undefined } }], default: undefined },
  },
  { collection: 'impacted_target_heads', versionKey: false },
);

export function impactedTargetModels(connection: Connection) {
  return {
    sets: connection.model('ImpactedTargetSet', impactedTargetSetSchema),
    parts: connection.model('ImpactedTargetPart', impactedTargetPartSchema),
    heads: connection.model('ImpactedTargetHead', impactedTargetHeadSchema),
  };
}
