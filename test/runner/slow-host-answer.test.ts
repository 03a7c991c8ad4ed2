/**
 * A host that does not answer is an outage even when nothing fails: the GitHub client waits out a rate limit inside
 * one call (up to its reset, an hour) and the queue's actions wait behind it, while test results cannot be read.
 * The engine must hold its test time-outs meanwhile, or runs time out and their PRs fail for the host's wait.
 */
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { waitFor } from '../support/wait-for.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('slow_answer');
const HOUR = 3_600_000;

test('a host action unanswered for long counts as an outage: a run in flight does not time out meanwhile, and the queue goes on once it answers', async () => {
  const queue = await insertQueue(db.stores, 'slow', { config: { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'], concurrency: 2 } });
  const clock = { now: 1_000_000 };
  let release: (() => void) | null = null;
  const host = quietHost({
    async startTestRun(request) {
      // The second run's start waits, as a rate-limited client does, until released.
      if (request.heads.some((head) => head.prNumber === 2)) await new Promise<void>((resolve) => (release = resolve));
      return { ok: true, testBranch: `mq/${request.runId}`, testBranchSha: null };
    },
  });
  const runner = new QueueRunner({ stores: db.stores, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner: 'A', now: () => clock.now, leaseTtlMs: 10 * HOUR, pollMs: 60_000, retryDelayMs: () => 20, slowAnswerMs: 50 });
  await runner.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  await runner.dispatch(queue.id, (await claimEntry(db.stores, queue.id, 1)).submitted);
  await runner.dispatch(queue.id, (await claimEntry(db.stores, queue.id, 2)).submitted);

  // The second start hangs: after slowAnswerMs the engine hears the host is unavailable.
  const outage = await waitFor(async () => (await runner.engineState(queue.id))?.hostOutage ?? null, (o) => o !== null);
  expect(outage?.message).toMatch(/not done after/);
  // Past the queue's testing time-out (60 min) while the host is silent: the first run does not time out.
  clock.now += 2 * HOUR;
  await runner.dispatch(queue.id, { type: 'tick' });
  expect((await runner.engineState(queue.id))?.runs.map((r) => r.status)).toEqual(['running', 'running']);

  // The host answers: the outage ends, the runs go on (their clocks moved by the outage), nothing failed.
  (release as (() => void) | null)?.();
  const state = await waitFor(async () => runner.engineState(queue.id), (s) => s?.hostOutage === null);
  await runner.dispatch(queue.id, { type: 'tick' });
  expect((await runner.engineState(queue.id))?.runs.map((r) => r.status)).toEqual(['running', 'running']);
  expect(state?.entries.map((e) => e.state)).toEqual(['TESTING', 'TESTING']);
  await runner.stop();
});
