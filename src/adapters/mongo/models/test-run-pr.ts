import { Schema, type Connection } from 'mongoose';

/**
 * The newest run that tested a PR, under `_id: "<queue id>:<PR number>"`: "the latest run of PR #n" is one read by
 * _id (the local FerretDB answers any other filter by reading every run ever stored). `createdAt` is the run's, so
 * a pointer only ever moves to a newer run. The document `_id: "complete"` says every stored run has its pointers
 * and the recent runs their copies (test-run-recent.ts), and `at`, when it was set (test-run-catch-up.ts); a queue's
 * key always holds a colon, so never "complete".
 */
const testRunPrSchema = new Schema(
  {
    _id: { type: String, required: true },
    runId: { type: Schema.Types.ObjectId },
    createdAt: { type: Date },
    // On the mark only: when it was set.
    at: { type: Date },
  },
  { collection: 'test_run_prs', versionKey: false },
);

export function testRunPrModel(connection: Connection) {
  return connection.model('TestRunPr', testRunPrSchema);
}
