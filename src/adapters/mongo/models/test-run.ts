import { Schema, type Connection } from 'mongoose';
import { TEST_RUN_STATUSES } from '../../../domain/records.js';

const testedPullRequestSchema = new Schema(
  { entryId: String, prNumber: Number, headSha: String, title: String, url: String },
  { _id: false },
);

/** A CI run of a base sha plus an ordered list of PR heads. */
export const testRunSchema = new Schema(
  {
    queueId: { type: Schema.Types.ObjectId, required: true },
    // The engine's name for the run ("r12"): unique per queue, set by the runner.
    engineRunId: { type: String, default: null },
    status: { type: String, enum: TEST_RUN_STATUSES, required: true },
    baseSha: { type: String, required: true },
    testBranch: { type: String, required: true },
    testBranchSha: { type: String, default: null },
    testedPullRequests: { type: [testedPullRequestSchema], default: [] },
    // Denormalised list of tested PR numbers so "the runs of PR #n" is one indexed query.
    testedPrNumbers: { type: [Number], default: [] },
    dependentPullRequests: { type: [testedPullRequestSchema], default: [] },
    isBisection: { type: Boolean, default: false },
    requiredStatuses: { type: [String], default: [] },
    requiredStatusesSource: { type: String, enum: ['queue', 'branch_protection', 'ruleset', 'none'], default: 'none' },
    requiredCheckApps: { type: [{ _id: false, name: String, appId: Number }], default: undefined },
    checkRuns: { type: [{ _id: false, name: String, url: String, status: String, conclusion: String }], default: [] },
    statusChecks: { type: [{ _id: false, context: String, url: String, state: String }], default: [] },
    failureStatuses: { type: [String], default: [] },
    impactedTargets: { type: Schema.Types.Mixed, default: null },
    landedWithoutCi: { type: String, default: null },
    // A probe's batch (engine run id) until a failed batch adopts it: no PR's pointer names it meanwhile.
    probeOf: { type: String, default: null },
    createdAt: { type: Date, required: true },
    finishedAt: { type: Date, default: null },
  },
  { collection: 'test_runs', versionKey: false },
);
testRunSchema.index({ queueId: 1, testedPrNumbers: 1, createdAt: -1 });
testRunSchema.index({ queueId: 1, status: 1 });
testRunSchema.index({ queueId: 1, engineRunId: 1 });
testRunSchema.index({ testBranchSha: 1, status: 1 });
testRunSchema.index({ queueId: 1, finishedAt: 1 });

export function testRunModel(connection: Connection) {
  return connection.model('TestRun', testRunSchema);
}
