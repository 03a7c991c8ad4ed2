import { Schema, type Connection } from 'mongoose';
import { DEFAULT_STALL_ALERT_MINUTES, DIRECT_MERGE_MODES, MERGE_METHODS, QUEUE_MODES, TUNINGS } from '../../../domain/queue-config.js';
import { REQUESTED_QUEUE_STATES } from '../../../domain/queue-state.js';

const repoSchema = new Schema(
  { host: { type: String, required: true }, owner: { type: String, required: true }, name: { type: String, required: true } },
  { _id: false },
);

const configSchema = new Schema(
  {
    mode: { type: String, enum: QUEUE_MODES, required: true },
    concurrency: { type: Number, required: true },
    batch: { type: Boolean, required: true },
    batchingMinSize: { type: Number, required: true },
    batchingMaxWaitTimeMinutes: { type: Number, required: true },
    bisectionConcurrency: { type: Number, required: true },
    pendingFailureDepth: { type: Number, required: true },
    canOptimisticallyMerge: { type: Boolean, required: true },
    testingTimeoutMinutes: { type: Number, required: true },
    mergeMethod: { type: String, enum: MERGE_METHODS, required: true },
    // Absent (not empty) means "the branch protection decides".
    requiredStatuses: { type: [String], default: undefined },
    commentsEnabled: { type: Boolean, required: true },
    commandsEnabled: { type: Boolean, required: true },
    statusCheckEnabled: { type: Boolean, required: true },
    enqueueingLabel: { type: String, required: true },
    createPrsForTestingBranches: { type: Boolean, required: true },
    directMergeMode: { type: String, enum: DIRECT_MERGE_MODES, required: true },
    stallAlertMinutes: { type: Number, default: DEFAULT_STALL_ALERT_MINUTES },
    retryFailedTests: { type: Number, default: 0 },
    // Absent in queues stored before it existed: none (withStoredDefaults).
    labelingBots: { type: [String], default: undefined },
    // Queues stored before tuning existed keep the settings they were given.
    tuning: { type: String, enum: TUNINGS, default: 'fixed' },
  },
  { _id: false },
);

/** One queue per repository and target branch. */
const queueSchema = new Schema(
  {
    repo: { type: repoSchema, required: true },
    repoKey: { type: String, required: true },
    orgKey: { type: String, required: true },
    targetBranch: { type: String, required: true },
    config: { type: configSchema, required: true },
    requestedState: { type: String, enum: REQUESTED_QUEUE_STATES, required: true },
    modeSwitchStartedAt: { type: Date, default: null },
    hostOutage: { type: new Schema({ since: { type: Date, required: true }, message: { type: String, required: true } }, { _id: false }), default: null },
    landingBlocked: { type: new Schema({ since: { type: Date, required: true }, message: { type: String, required: true }, nextTryAt: { type: Date } }, { _id: false }), default: null },
    stalled: { type: new Schema({ since: { type: Date, required: true }, message: { type: String, required: true } }, { _id: false }), default: null },
    configFile: {
      type: new Schema({ path: { type: String, required: true }, commitSha: { type: String, required: true }, appliedAt: { type: Date, required: true } }, { _id: false }),
      default: null,
    },
    // The host's id of the repository (it stays when the repository is renamed or transferred).
    hostRepoId: { type: String, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { collection: 'queues', versionKey: false },
);
queueSchema.index({ hostRepoId: 1 });
queueSchema.index({ repoKey: 1, targetBranch: 1 }, { unique: true });
queueSchema.index({ orgKey: 1 });

export function queueModel(connection: Connection) {
  return connection.model('Queue', queueSchema);
}
