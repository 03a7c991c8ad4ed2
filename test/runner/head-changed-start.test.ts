/**
 * The host would not build a run because a PR's head was not the one the queue read (pushed to since). The runner
 * used to ask for the PR's facts and have the run built again at once: on the same head, before the read came back,
 * so the host refused it again (a branch built for nothing each round). Now the engine holds the PR until the read
 * is in: the push cancels it and the PR behind it is built without it, the stale head never asked for again. A held
 * PR whose read was lost is read again by the maintenance with the waiting PRs.
 */
import { gitHostRegistry, type TestRunRequest } from '../../src/ports/git-host.js';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { refreshWaitingFacts } from '../../src/runner/refresh-waiting-facts.js';
import { claimEntry, insertQueue, prFacts, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('head_changed_start');

/** A host that builds a run only on the PRs' current heads, and reads a PR as it is now (or not at all, while `readsLost`). */
function pushedHost() {
  const heads = new Map<number, string>();
  const builds: TestRunRequest[] = [];
  const reads: number[] = [];
  const world = { heads, builds, reads, readsLost: false };
  const host = quietHost({
    startTestRun: async (request) => {
      builds.push(request);
      const moved = request.heads.find((h) => h.headSha !== (heads.get(h.prNumber) ?? `head${h.prNumber}`));
      if (moved) return { ok: false, reason: 'head_changed', prNumber: moved.prNumber };
      return { ok: true, testBranch: `mq/${request.runId}`, testBranchSha: `sha-${request.runId}` };
    },
    readPullRequest: async (_repo, prNumber) => {
      reads.push(prNumber);
      if (world.readsLost) throw Object.assign(new Error('Forbidden'), { status: 403 });
      return { ...prFacts(prNumber), headSha: heads.get(prNumber) ?? `head${prNumber}` };
    },
  });
  return { world, host };
}

const builtWith = (builds: TestRunRequest[], token: string) => builds.filter((b) => b.heads.some((h) => `${h.prNumber}@${h.headSha}` === token)).length;

/** The runs the queue decided (each recorded with its decision, built or not), as the heads they apply. */
async function decidedRuns(runner: QueueRunner, queueId: string): Promise<string[][]> {
  const decided: string[][] = [];
  for (let seq = 1; seq < ((await runner.engineState(queueId))?.nextRunSeq ?? 1); seq++) {
    const record = await db.stores.testRuns.findByEngineRunId(queueId, `r${seq}`);
    if (record) decided.push([...record.dependentPullRequests, ...record.testedPullRequests].map((pr) => `${pr.prNumber}@${pr.headSha}`));
  }
  return decided;
}

test('a run refused for a PR pushed to after the queue read it: the stale head is never built again; the push cancels the PR and the PR behind it is built', async () => {
  const config = { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'], concurrency: 1 };
  const queueId = (await insertQueue(db.stores, 'pushed-under', { config })).id;
  const { world, host } = pushedHost();
  const runner = new QueueRunner({ stores: db.stores, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner: 'A', pollMs: 60_000 });
  await runner.dispatch(queueId, { type: 'base_moved', sha: 'base0' });
  const first = await claimEntry(db.stores, queueId, 1);
  const second = await claimEntry(db.stores, queueId, 2);
  // #1 is pushed to once the queue has read it.
  world.heads.set(1, 'head1-pushed');
  await runner.dispatch(queueId, first.submitted);
  await runner.dispatch(queueId, second.submitted);
  await runner.settled(queueId);

  // One run with #1's head as read, refused; the next is for #2 alone, decided once the read found the push.
  expect(await decidedRuns(runner, queueId)).toEqual([['1@head1'], ['2@head2']]);
  expect(builtWith(world.builds, '1@head1')).toBe(1);
  expect(world.reads).toContain(1);
  expect((await db.stores.entries.findById(first.entryId))?.state).toBe('CANCELLED');
  const state = await runner.engineState(queueId);
  expect(state?.runs.map((r) => r.unit.map((h) => h.entryId))).toEqual([[second.entryId]]);
  expect(state?.runs[0]?.ahead).toEqual([]);
  expect(world.builds.at(-1)?.heads.map((h) => `${h.prNumber}@${h.headSha}`)).toEqual(['2@head2']);
  await runner.stop();
});

test('a held PR whose read was lost is named to the maintenance, which reads it again; then it is built', async () => {
  const config = { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'], concurrency: 1 };
  const queueId = (await insertQueue(db.stores, 'read-lost', { config })).id;
  const { world, host } = pushedHost();
  const runner = new QueueRunner({ stores: db.stores, hosts: gitHostRegistry({ 'fake.example': host }), log: silentLog, owner: 'A', pollMs: 60_000 });
  await runner.dispatch(queueId, { type: 'base_moved', sha: 'base0' });
  const first = await claimEntry(db.stores, queueId, 1);
  // The host's list of #1's commits lags behind its head for a while, and the read the refusal asks for is refused (lost).
  world.heads.set(1, 'head1-lagging');
  world.readsLost = true;
  await runner.dispatch(queueId, first.submitted);
  await runner.settled(queueId);
  expect(builtWith(world.builds, '1@head1')).toBe(1);
  expect(world.reads).toEqual([1]);
  expect(runner.waitingPullRequests(queueId)).toEqual([{ entryId: first.entryId, prNumber: 1, mergeability: 'mergeable', awaitingFacts: true }]);

  // The host caught up; the maintenance reads the held PR again (through the host events, as composed).
  world.heads.delete(1);
  world.readsLost = false;
  const asked: number[] = [];
  const events = {
    pullRequestChanged: async (_repo: unknown, n: number) => {
      asked.push(n);
      await runner.record(queueId, { type: 'refresh_pull_request', prNumber: n });
    },
    testRunFinished: async () => undefined,
    branchMoved: async () => undefined,
    hostAccess: async () => undefined,
  };
  expect(await refreshWaitingFacts(db.stores, events, (id) => runner.waitingPullRequests(id), [queueId])).toBe(1);
  expect(asked).toEqual([1]);
  await runner.settled(queueId);
  expect(runner.waitingPullRequests(queueId)).toEqual([]);
  expect(builtWith(world.builds, '1@head1')).toBe(2);
  expect((await db.stores.testRuns.findByEngineRunId(queueId, (await runner.engineState(queueId))?.runs[0]?.id ?? ''))?.testBranchSha).not.toBeNull();
  await runner.stop();
});
