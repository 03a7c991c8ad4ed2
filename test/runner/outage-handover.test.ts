/**
 * An outage outlives its writer: a writer reports the host unavailable (the engine then starts and merges
 * nothing), and loses the queue before the host answers again. The next writer takes the outage over, and its
 * first host action that succeeds says it ended; before, it started with no outage of its own and never said
 * so, and the queue waited for good.
 */
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';
import { waitFor } from '../support/wait-for.js';

const TTL = 30_000;
const db = useRunnerDatabase('outage_handover');

test('the next writer ends an outage the previous one reported, and the queue starts its run', async () => {
  const queue = await insertQueue(db.stores, 'handover');
  const { submitted } = await claimEntry(db.stores, queue.id, 1);
  const clock = { now: 1_000_000 };
  let down = true;
  const started: string[] = [];
  const host = quietHost({
    async startTestRun(request) {
      if (down) throw Object.assign(new Error('Bad Gateway'), { status: 502 });
      started.push(request.runId);
      return { ok: true, testBranch: `mq/${request.runId}`, testBranchSha: null };
    },
  });
  const runner = (owner: string) =>
    new QueueRunner({ stores: db.stores, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner, now: () => clock.now, leaseTtlMs: TTL, pollMs: 60_000, retryDelayMs: () => 20 });
  const a = runner('A');
  await a.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  await a.dispatch(queue.id, submitted);
  // A's start of the run fails: the engine hears the host is unavailable.
  expect(await waitFor(async () => (await a.engineState(queue.id))?.hostOutage ?? null, (outage) => outage !== null)).toMatchObject({ message: expect.stringContaining('502') });
  await a.stop();

  // The host answers again once A is gone; B takes the queue over after A's lease ran out.
  down = false;
  clock.now += TTL + 1_000;
  const b = runner('B');
  await b.dispatch(queue.id, { type: 'tick' });
  const state = await waitFor(async () => b.engineState(queue.id), (s) => s?.hostOutage === null && started.length === 1, 5_000);
  expect(state?.runs.map((r) => r.status)).toEqual(['running']);
  await b.stop();
});
