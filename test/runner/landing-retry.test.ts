/**
 * A blocked landing is tried again by the queue itself (engine/landing-block.ts): GitHub's "Reference update failed"
 * for a moment, or a bypass fixed on GitHub, no longer waits for an operator's updateQueue. The queue record shows
 * the block with the time of the next try while it waits, and nothing once the try lands.
 */
import { gitHostRegistry, type MergeOutcome } from '../../src/ports/git-host.js';
import { LANDING_RETRY_FIRST_MS } from '../../src/engine/landing-block.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { waitFor } from '../support/wait-for.js';
import { landingHost, oneRunTesting, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('landing_retry');

test('a landing GitHub refused for a moment lands at the queue\'s own next try, and the block shown meanwhile says when', async () => {
  const clock = { now: Date.parse('2026-11-29T12:00:00Z') };
  const answers: MergeOutcome[] = [
    { ok: false, reason: 'blocked', message: 'GitHub refused to move main: Reference update failed.' },
    { ok: true, newBaseSha: 'landed' },
  ];
  const { host, merges } = landingHost(async () => answers.shift() ?? { ok: false, reason: 'blocked', message: 'asked once too often' });
  const runner = new QueueRunner({ stores: db.stores, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner: 'A', now: () => clock.now, pollMs: 60_000 });
  const { queueId, entryId, runId } = await oneRunTesting(db.stores, runner, 'retried');

  await runner.dispatch(queueId, { type: 'run_finished', runId, passed: true });
  const blocked = await waitFor(async () => (await db.stores.queues.findById(queueId))?.landingBlocked, (note) => Boolean(note));
  const nextTry = new Date(clock.now + LANDING_RETRY_FIRST_MS).toISOString();
  expect(blocked?.message).toBe(`GitHub refused to move main: Reference update failed. The queue tries again by itself at ${nextTry} (then less often); updateQueue tries at once.`);
  expect(blocked?.nextTryAt?.toISOString()).toBe(nextTry);
  expect((await db.stores.entries.findById(entryId))?.state).toBe('TESTS_PASSED');

  // Not before its time.
  clock.now += LANDING_RETRY_FIRST_MS - 1_000;
  await runner.dispatch(queueId, { type: 'tick' });
  await runner.settled(queueId);
  expect(merges).toHaveLength(1);

  clock.now += 1_000;
  await runner.dispatch(queueId, { type: 'tick' });
  await waitFor(async () => (await db.stores.entries.findById(entryId))?.state, (state) => state === 'MERGED');
  // The same passed run (its record) both times: landed without being tested again.
  expect(new Set(merges.map((m) => m.runId)).size).toBe(1);
  expect(merges).toHaveLength(2);
  await waitFor(async () => (await db.stores.queues.findById(queueId))?.landingBlocked, (note) => note === null);
  await runner.stop();
});
