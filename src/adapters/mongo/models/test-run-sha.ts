import { Schema, type Connection } from 'mongoose';

/**
 * The runs whose test branch is at a sha, under `_id: <sha>`: a check result (which arrives by sha, mostly for PR
 * heads that are no run) and a push to a target branch find their run with one read by _id. The local FerretDB
 * answers any other filter by reading the whole collection, and `test_runs` grows with every run ever started.
 * The document `_id: "complete"` says every run has its pointer (runs stored before pointers existed get theirs
 * once, at start-up), and `at`, when it was set (test-run-catch-up.ts); a sha is hex, so never "complete".
 */
const testRunShaSchema = new Schema(
  {
    _id: { type: String, required: true },
    // In the order written: oldest first.
    runs: { type: [{ _id: false, queueId: Schema.Types.ObjectId, runId: Schema.Types.ObjectId }], default: undefined },
    // On the mark only: when it was set.
    at: { type: Date },
  },
  { collection: 'test_run_shas', versionKey: false },
);

export function testRunShaModel(connection: Connection) {
  return connection.model('TestRunSha', testRunShaSchema);
}
