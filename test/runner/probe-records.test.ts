/**
 * A probe (engine/probes.ts) is a real CI run, so it has a record, but it decides nothing until its failed batch
 * adopts it: until then a PR's latest run (testing details, check links) stays the batch the PR is in, and a probe
 * cancelled because its batch passed never shows as a merged PR's run. Adopted, it is the PR's latest run.
 */
import type { EngineRun } from '../../src/engine/model.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import type { ActionContext } from '../../src/runner/execute-actions.js';
import { recordDecision } from '../../src/runner/record-decision.js';
import type { RunnerAction } from '../../src/runner/runner-model.js';
import { Timers } from '../../src/runner/timers.js';
import { insertQueue, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('probe_records');

function run(id: string, seq: number, entryIds: string[], startedAt: number, probeOf?: string): EngineRun {
  return {
    id,
    seq,
    baseSha: 'base0',
    ahead: [],
    unit: entryIds.map((entryId) => ({ entryId, headSha: `head-${entryId}` })),
    status: 'running',
    startedAt,
    finishedAt: null,
    isBisection: probeOf !== undefined,
    failedChecks: [],
    failureReason: null,
    ...(probeOf ? { probeOf } : {}),
  };
}

test("a probe is no PR's latest run until its failed batch adopts it; a replayed adoption changes nothing", async () => {
  const queue = await insertQueue(db.stores, 'probes');
  let version = 0;
  const ctx = {
    queue,
    stores: db.stores,
    hosts: gitHostRegistry({}),
    log: silentLog,
    timers: new Timers(),
    now: () => 1_000_000,
    report: async () => undefined,
    wake: () => undefined,
    positionOf: () => undefined,
  } as ActionContext;
  const record = (actions: RunnerAction[]) => recordDecision(ctx, ++version, actions);
  const latest = async (prNumber: number) => (await db.stores.testRuns.latestForPr(queue.id, prNumber))?.engineRunId ?? null;
  // The runs' records name their PRs from the entries.
  const entryOf = async (prNumber: number) => {
    const at = new Date();
    const inserted = await db.stores.entries.insert({ queueId: queue.id, prNumber, attempt: 1, state: 'TESTING', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, facts: null, timeline: [] });
    if (!inserted.ok) throw new Error(`PR ${prNumber} not inserted`);
    return inserted.value.id;
  };
  const [three, four] = [await entryOf(3), await entryOf(4)];
  const batch = run('r1', 1, [three, four], 1_000);
  const probe = run('r2', 2, [three], 2_000, 'r1');

  await record([{ type: 'start_run', run: batch }]);
  expect(await latest(3)).toBe('r1');
  await record([{ type: 'start_run', run: probe }]);
  // Newer, and testing PR 3, but a probe: PR 3's latest run is still its batch.
  expect(await latest(3)).toBe('r1');
  expect((await db.stores.testRuns.findByEngineRunId(queue.id, 'r2'))?.probeOf).toBe('r1');

  // The batch fails and is split into exactly the probe's PRs: the probe is adopted.
  const adoption: RunnerAction[] = [{ type: 'cancel_run', runId: 'r1' }, { type: 'adopt_run', runId: 'r2' }];
  await record(adoption);
  expect(await latest(3)).toBe('r2');
  expect(await latest(4)).toBe('r1');
  const adopted = await db.stores.testRuns.findByEngineRunId(queue.id, 'r2');
  expect(adopted).toMatchObject({ probeOf: null, status: 'in_progress' });
  // The same decision recorded again (a new writer after a crash): nothing moves.
  await recordDecision(ctx, version, adoption);
  expect(await latest(3)).toBe('r2');
});
