/**
 * The host-action loop carries out a decision only once it is recorded. It once took a decision from the writer's
 * memory while its records were still being written: starting a run, it described the run's PRs from entries not
 * written yet, and the run's record named PR #0 (the dashboard drew a lane of its own for "#0"; seen once in CI).
 */
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('act_after_record');

test("a run started while its PR's entry is being recorded names its PR (the act loop waits for the record)", async () => {
  const config = { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'], concurrency: 2 };
  const queueId = (await insertQueue(db.stores, 'act-after-record', { config })).id;
  // The host holds the first run's start, so the host-action loop is busy when the second decision is stored.
  let releaseHost = () => {};
  const hostHeld = new Promise<void>((resolve) => (releaseHost = resolve));
  let firstStart = true;
  const host = quietHost({
    startTestRun: async (request) => {
      if (firstStart) {
        firstStart = false;
        await hostHeld;
      }
      return { ok: true, testBranch: `mq/${request.runId}`, testBranchSha: `sha-${request.runId}` };
    },
  });
  // The second PR's entry write waits until the host lets the loop go on (and a moment more).
  const second = await claimEntry(db.stores, queueId, 2);
  const entries = {
    ...db.stores.entries,
    async recordTransitions(...args: Parameters<typeof db.stores.entries.recordTransitions>) {
      if (args[1]?.some((first) => first.entryId === second.entryId)) {
        await hostHeld;
        await new Promise((r) => setTimeout(r, 300));
      }
      return db.stores.entries.recordTransitions(...args);
    },
  };
  const runner = new QueueRunner({ stores: { ...db.stores, entries }, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner: 'A', pollMs: 60_000 });
  await runner.dispatch(queueId, { type: 'base_moved', sha: 'base0' });
  const first = await claimEntry(db.stores, queueId, 1);
  await runner.dispatch(queueId, first.submitted);
  const decided = runner.dispatch(queueId, second.submitted);
  await new Promise((r) => setTimeout(r, 100));
  releaseHost();
  await decided;
  await runner.settled(queueId);
  const runs = (await runner.engineState(queueId))?.runs ?? [];
  expect(runs).toHaveLength(2);
  const named = [];
  for (const run of runs) named.push((await db.stores.testRuns.findByEngineRunId(queueId, run.id))?.testedPullRequests.map((p) => p.prNumber));
  expect(named).toEqual([[1], [2]]);
  await runner.stop();
});
