/**
 * A PR's status links the run it comes from (its test branch, its failing checks). The engine names that run in the
 * status action, so the runner reads its record by _id; looking up the PR's latest run instead is a query the local
 * FerretDB answers by reading every test run stored, once per status of a PR in a run.
 */
import { jest } from '@jest/globals';
import type { PullRequestStatusUpdate } from '../../src/ports/git-host.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('status_run_link');

test('a PR testing shows its run, read by the engine run id the status names, without looking for its latest run', async () => {
  const queue = await insertQueue(db.stores, 'status-link');
  const statuses: PullRequestStatusUpdate[] = [];
  const testRuns = { ...db.stores.testRuns };
  const latestForPr = jest.fn(db.stores.testRuns.latestForPr);
  testRuns.latestForPr = latestForPr;
  const runner = new QueueRunner({
    stores: { ...db.stores, testRuns },
    hosts: gitHostRegistry({ 'fake.example': quietHost({ reportPullRequestStatus: async (update) => void statuses.push(update) }) }),
    log: silentLog,
    owner: 'A',
    pollMs: 60_000,
  });
  await runner.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  expect(await runner.dispatch(queue.id, (await claimEntry(db.stores, queue.id, 1)).submitted)).toBe(true);
  await runner.settled(queue.id);
  const testing = statuses.find((s) => s.prNumber === 1 && s.state === 'TESTING');
  const [run] = (await runner.engineState(queue.id))?.runs ?? [];
  const record = await db.stores.testRuns.findByEngineRunId(queue.id, run!.id);
  expect(testing?.testRun).toEqual({ runId: record!.id, testBranch: `mq/${record!.id}`, failedChecks: [] });
  expect(latestForPr).not.toHaveBeenCalled();
  await runner.stop();
});
