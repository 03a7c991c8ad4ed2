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

export function impactedTargetModels(connection: Connection) {
  return {
    sets: connection.model('ImpactedTargetSet', impactedTargetSetSchema),
    parts: connection.model('ImpactedTargetPart', impactedTargetPartSchema),
  };
}
