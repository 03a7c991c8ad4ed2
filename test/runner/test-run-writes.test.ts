/**
 * Two writes to one run's record at once both hold. The local FerretDB applies an update by reading the document,
 * changing it in Go and writing it back, so two concurrent updates of one document can lose one. The runner makes
 * two at once: the host-action loop stores the test branch of a run it started while the decision that cancels it
 * stores `cancelled` (a restart right after a start). Seen in CI: the cancelled run stayed `in_progress`.
 */
import { ObjectId } from 'mongodb';
import { testRunFixture } from '../support/test-run-fixture.js';
import { useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('test_run_writes');

test('a run cancelled while its test branch is stored ends cancelled, with its branch', async () => {
  const runs = db.stores.testRuns;
  const queueId = new ObjectId().toHexString();
  for (let i = 0; i < 20; i++) {
    const run = await runs.insert(testRunFixture(queueId, { engineRunId: `r${i}`, testBranchSha: null }));
    const finishedAt = new Date();
    await Promise.all([
      runs.update(run.id, { testBranch: `mq/main/r${i}`, testBranchSha: (i + 1).toString(16).padStart(40, 'b') }),
      runs.update(run.id, { status: 'cancelled', finishedAt }),
    ]);
    const stored = await runs.findById(queueId, run.id);
    expect({ status: stored?.status, testBranch: stored?.testBranch }).toEqual({ status: 'cancelled', testBranch: `mq/main/r${i}` });
    const recent = (await runs.listFinishedSince(queueId, new Date(0))).find((r) => r.id === run.id);
    expect(recent?.status).toBe('cancelled');
  }
});
