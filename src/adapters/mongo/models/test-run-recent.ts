import type { Connection } from 'mongoose';
import { testRunSchema } from './test-run.js';

/**
 * Full copies (same fields, same _id) of the runs that reads of "the queue now" ask about: every run in progress,
 * every run finished within RECENT_RUNS_WINDOW_MS, and each queue's latest finished run whatever its age (see
 * test-run-recent.ts). The local FerretDB answers any filter but an exact `{_id}` by reading the whole collection;
 * `test_runs` is never pruned, this one is, so such reads stay cheap however many runs were ever stored.
 */
const testRunRecentSchema = testRunSchema.clone().clearIndexes();
testRunRecentSchema.set('collection', 'test_runs_recent');
// Only what the readers filter on (used by MongoDB; FerretDB scans this small collection anyway).
testRunRecentSchema.index({ queueId: 1, status: 1 });
testRunRecentSchema.index({ queueId: 1, finishedAt: 1 });

export function testRunRecentModel(connection: Connection) {
  return connection.model('TestRunRecent', testRunRecentSchema, 'test_runs_recent');
}
