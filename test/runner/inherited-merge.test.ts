/**
 * A writer that lost its lease while landing: the host may have landed the run (and commented, closed PRs) with
 * the answer lost. The next writer carries out the decisions left unacted, and a landing among them is asked as a
 * landing asked again (MergeRequest.askedAgain), so the host looks for what was done before (its landing branch,
 * its comments) instead of doing it twice. Found by review: only a retry within one writer said so.
 */
import { gitHostRegistry, type GitHost, type MergeRequest } from '../../src/ports/git-host.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { waitFor } from '../support/wait-for.js';
import { landingHost, oneRunTesting, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const TTL = 30_000;
const db = useRunnerDatabase('inherited_merge');

function runner(owner: string, host: GitHost, clock: { now: number }) {
  return new QueueRunner({ stores: db.stores, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner, now: () => clock.now, leaseTtlMs: TTL, pollMs: 60_000, retryDelayMs: () => 1 });
}

/** A host double that lands every run, after `land` (which may throw, the answer lost). */
const landingAfter = (land: (request: MergeRequest) => Promise<void>) => landingHost(async (request) => {
  await land(request);
  return { ok: true, newBaseSha: 'landed' };
});

const merged = (entryId: string) => waitFor(async () => (await db.stores.entries.findById(entryId))?.state, (state) => state === 'MERGED');

test('a landing whose writer lost its lease with the answer lost: the next writer asks it again (askedAgain), once, and the PR merges', async () => {
  const clock = { now: 1_000_000 };
  // A lands, then dies before the answer is back (a 502 after the write), its lease running out.
  let stopping: Promise<void> | null = null;
  const a = landingAfter(async () => {
    clock.now += TTL + 5_000;
    stopping = writerA.stop();
    throw Object.assign(new Error('Bad Gateway'), { status: 502 });
  });
  const b = landingAfter(async () => undefined);
  const writerA = runner('A', a.host, clock);
  const writerB = runner('B', b.host, clock);
  const { queueId, entryId, runId } = await oneRunTesting(db.stores, writerA, 'inherited');

  await writerA.dispatch(queueId, { type: 'run_finished', runId, passed: true });
  await waitFor(async () => a.merges.length, (count) => count > 0);
  expect(a.merges).toHaveLength(1);
  expect(a.merges[0]?.askedAgain).toBeUndefined();
  await stopping;

  await writerB.start();
  await merged(entryId);
  expect(b.merges).toHaveLength(1);
  expect(b.merges[0]).toMatchObject({ runId: a.merges[0]?.runId, askedAgain: true });
  await writerB.stop();
});

test('a writer that took its lease back after it ran out mid-landing asks that landing again (askedAgain)', async () => {
  const clock = { now: 1_000_000 };
  // The first landing outlives the lease (no other replica takes it) and its answer is lost; the next one goes through.
  let lapses = 1;
  const a = landingAfter(async () => {
    if (lapses-- <= 0) return;
    clock.now += TTL + 5_000;
    throw Object.assign(new Error('Bad Gateway'), { status: 502 });
  });
  const writer = runner('A', a.host, clock);
  const { queueId, entryId, runId } = await oneRunTesting(db.stores, writer, 'taken-back');

  await writer.dispatch(queueId, { type: 'run_finished', runId, passed: true });
  await merged(entryId);

  expect(a.merges.map((m) => m.askedAgain === true)).toEqual([false, true]);
  await writer.stop();
});
