/**
 * The forecast's CI history counts a finished run once the writer records it,
 * without reading the history again (on the local FerretDB that read costs a
 * pass over every recent run); a read that was under way meanwhile (it may miss
 * that run) answers its caller but is not kept, or the forecast would rest on
 * it until the next read. (The dashboard once showed one finished run of two.)
 */
import type { TestRunRecord } from '../../src/domain/records.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('forecast_history');

const host = quietHost({ startTestRun: async (request) => ({ ok: true, testBranch: `mq/${request.runId}`, testBranchSha: `sha-${request.runId}` }) });

/**
 * A runner whose queue tests PR 1 (its clock moved by hand), counting the CI-history reads it makes; `afterRead`
 * runs after each read, before it answers (to hold one back).
 */
async function testingWithCountedReads(name: string, options: { testingTimeoutMinutes?: number; afterRead?: () => Promise<void> } = {}) {
  const at = new Date();
  const config = { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'], testingTimeoutMinutes: options.testingTimeoutMinutes ?? 60 };
  const queueId = (await insertQueue(db.stores, name, { at, config })).id;
  const { submitted } = await claimEntry(db.stores, queueId, 1, { at });
  const counted = { reads: 0 };
  const testRuns = {
    ...db.stores.testRuns,
    async listFinishedSince(id: string, since: Date): Promise<TestRunRecord[]> {
      counted.reads++;
      const found = await db.stores.testRuns.listFinishedSince(id, since);
      await options.afterRead?.();
      return found;
    },
  };
  const clock = { now: at.getTime() };
  const runner = new QueueRunner({ stores: { ...db.stores, testRuns }, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner: 'A', pollMs: 60_000, now: () => clock.now });
  await runner.dispatch(queueId, { type: 'base_moved', sha: 'base0' });
  await runner.dispatch(queueId, submitted);
  await runner.settled(queueId);
  const [run] = (await runner.engineState(queueId))?.runs ?? [];
  const record = run ? await db.stores.testRuns.findByEngineRunId(queueId, run.id) : null;
  if (!run || !record) throw new Error('no run started');
  expect((await runner.mergeForecast(queueId)).samples).toBe(0);
  return { queueId, runner, clock, counted, run, record };
}

test('a history read under way while a finished run is recorded is not kept: the next forecast counts the run', async () => {
  // The history read after `gate` is set waits until released: it began before the run finished.
  let release: (() => void) | null = null;
  let gate = false;
  const afterRead = async () => {
    if (!gate) return;
    gate = false;
    await new Promise<void>((resolve) => (release = resolve));
  };
  const { queueId, runner, clock, run, record } = await testingWithCountedReads('forecast', { afterRead });

  // What the host-action loop read of the history has aged out: the next forecast reads it again.
  clock.now += 10 * 60_000 + 1_000;
  gate = true;
  const before = runner.mergeForecast(queueId);
  for (let waited = 0; !release; waited += 5) {
    if (waited > 5_000) throw new Error('the forecast did not read the history');
    await new Promise((r) => setTimeout(r, 5));
  }
  await runner.dispatch(queueId, { type: 'test_run_reported', testRunId: record.id, engineRunId: run.id, passed: true, checkRuns: [], failedChecks: [] });
  (release as () => void)();
  expect((await before).samples).toBe(0); // What that read found, for its own caller.
  expect((await runner.mergeForecast(queueId)).samples).toBe(1);
  await runner.stop();
});

test('a run whose result the writer records joins the CI history without a read; the history is read again after ten minutes', async () => {
  const { queueId, runner, clock, counted, run, record } = await testingWithCountedReads('forecast-added');
  const readsBefore = counted.reads;

  clock.now += 3 * 60_000; // A run of three minutes.
  await runner.dispatch(queueId, { type: 'test_run_reported', testRunId: record.id, engineRunId: run.id, passed: false, checkRuns: [], failedChecks: ['ci'] });
  await runner.settled(queueId);
  const forecast = await runner.mergeForecast(queueId);
  expect(forecast.samples).toBe(1);
  expect(forecast.history.ciDurationMs).toBe(3 * 60_000);
  expect(forecast.history.failureRate).toBeGreaterThan(0.1); // One failure of one, shrunk toward the prior of 0.1.
  expect(counted.reads).toBe(readsBefore);

  // Ten minutes on, the history is read again, and holds the same run.
  clock.now += 10 * 60_000 + 1_000;
  expect((await runner.mergeForecast(queueId)).samples).toBe(1);
  expect(counted.reads).toBe(readsBefore + 1);
  await runner.stop();
});

test('a run that timed out joins the CI history as a failure, without a read', async () => {
  const { queueId, runner, clock, counted } = await testingWithCountedReads('forecast-timeout', { testingTimeoutMinutes: 5 });
  const readsBefore = counted.reads;

  clock.now += 6 * 60_000; // Past the queue's five-minute test time-out.
  await runner.dispatch(queueId, { type: 'tick' });
  await runner.settled(queueId);
  const forecast = await runner.mergeForecast(queueId);
  expect(forecast.samples).toBe(1);
  expect(forecast.history.failureRate).toBeGreaterThan(0.1);
  expect(counted.reads).toBe(readsBefore);
  await runner.stop();
});
