/**
 * Two runners, one database: a writer whose lease ran out while it was deciding
 * can neither persist its decision nor act on it; one whose decision lost the
 * compare-and-set (the next writer appended that version first) does neither
 * either; one whose lease runs out while its decision is stored leaves the record
 * to the next writer; one that takes its lease back after another writer held it reloads.
 * Each runner has its own host double, so what each did is visible.
 */
import { gitHostRegistry, type GitHost } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { loadState } from '../../src/runner/decide-inputs.js';
import { claimEntry, insertQueue, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const TTL = 30_000;

const db = useRunnerDatabase('lease');

/** A host double that records the test runs it was asked to start, per queue. */
function recordingHost(): GitHost & { started: string[]; startedFor(queueId: string): string[] } {
  const started: string[] = [];
  const queues: string[] = [];
  const host = quietHost({
    async startTestRun(request) {
      started.push(request.runId);
      queues.push(request.queueId);
      return { ok: true, testBranch: `mq/${request.runId}`, testBranchSha: null };
    },
  });
  return { ...host, started, startedFor: (queueId) => started.filter((_, i) => queues[i] === queueId) };
}

let repoCounter = 0;
/** A queue whose base is known, and an entry for PR 1 ready to be submitted. */
async function queueWithEntry() {
  const queue = await insertQueue(db.stores, `lease${++repoCounter}`);
  return { queue, ...(await claimEntry(db.stores, queue.id, 1)) };
}

function runner(owner: string, host: GitHost, clock: { now: number }, engine = db.stores.engine, snapshotEvery?: number) {
  return new QueueRunner({
    stores: { ...db.stores, engine },
    hosts: gitHostRegistry({ 'fake.example': host }),
    log: silentLog,
    owner,
    now: () => clock.now,
    leaseTtlMs: TTL,
    pollMs: 60_000,
    ...(snapshotEvery ? { snapshotEvery } : {}),
  });
}

const settle = () => new Promise((r) => setTimeout(r, 300));

test('a writer whose lease expires mid-decision neither persists nor acts; the next writer does both, once', async () => {
  const { queue, entryId, submitted } = await queueWithEntry();
  const clock = { now: 1_000_000 };
  const hostA = recordingHost();
  const hostB = recordingHost();
  // A learns the base first (so it holds the lease), then stalls for longer than its lease between reading the inbox and deciding.
  let stall = false;
  const stallingEngine = {
    ...db.stores.engine,
    async pending(queueId: string, limit: number) {
      const items = await db.stores.engine.pending(queueId, limit);
      if (stall && items.length > 0) clock.now += TTL + 5_000;
      return items;
    },
  };
  const a = runner('A', hostA, clock, stallingEngine);
  const b = runner('B', hostB, clock);
  await a.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  const versionsBefore = (await db.stores.engine.decisionsAfter(queue.id, 0, 100)).length;

  // Through the inbox (as from another replica): A reads it, and stalls there.
  stall = true;
  await a.record(queue.id, submitted);
  await settle();
  stall = false;
  expect(hostA.started).toEqual([]);
  expect((await db.stores.engine.decisionsAfter(queue.id, 0, 100)).length).toBe(versionsBefore);
  // Not decided: the submission is still only its claim (answered as submitted), no entry written.
  expect((await db.stores.entries.find(queue.id, 1))?.state).toBe('NOT_READY');
  expect(await db.stores.entries.findById(entryId)).toBeNull();

  // The lease A held has run out: B takes over, decides the submit and starts its run.
  await b.start();
  await settle();
  expect(hostB.started).toHaveLength(1);
  expect(hostA.started).toEqual([]);
  const entry = await db.stores.entries.findById(entryId);
  expect(entry?.state).toBe('TESTING');
  expect(entry?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  await a.stop();
  await b.stop();
});

test('a writer that loses the compare-and-set (another appended its version) records and does nothing', async () => {
  const { queue, entryId, submitted } = await queueWithEntry();
  // A's clock is behind: its lease looks valid to A after B (clock ahead) took it over.
  const clockA = { now: 2_000_000 };
  const clockB = { now: 2_000_000 };
  const hostA = recordingHost();
  const hostB = recordingHost();
  const b = runner('B', hostB, clockB);
  let raced = false;
  const racingEngine = {
    ...db.stores.engine,
    async append(decision: Parameters<Stores['engine']['append']>[0]) {
      if (!raced && decision.items.some((item) => item.input.type === 'submitted')) {
        raced = true;
        // Just before A appends, B (whose clock says A's lease is over) decides the same inbox.
        clockB.now += TTL + 5_000;
        await b.start();
      }
      return db.stores.engine.append(decision);
    },
  };
  const a = runner('A', hostA, clockA, racingEngine);
  await a.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  // Handed to A, the writer: its decision is refused, so A leaves the submit to the inbox for B.
  expect(await a.dispatch(queue.id, submitted)).toBe(false);
  await b.settled(queue.id);
  expect(raced).toBe(true);
  expect(hostA.started).toEqual([]);
  expect(hostB.startedFor(queue.id)).toHaveLength(1);
  const decisions = await db.stores.engine.decisionsAfter(queue.id, 0, 100);
  const submits = decisions.filter((d) => d.items.some((item) => item.input.type === 'submitted'));
  expect(submits).toHaveLength(1);
  const entry = await db.stores.entries.findById(entryId);
  expect(entry?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  await a.stop();
  await b.stop();
});

test('a writer whose lease runs out while its decision is stored does not record it: the next writer does, once', async () => {
  const { queue, entryId, submitted } = await queueWithEntry();
  const clock = { now: 5_000_000 };
  const hostA = recordingHost();
  const hostB = recordingHost();
  let stall = false;
  const stallingEngine = {
    ...db.stores.engine,
    async append(decision: Parameters<Stores['engine']['append']>[0]) {
      const stored = await db.stores.engine.append(decision);
      // Stored, then A stalls for longer than its lease before recording it.
      if (stall && decision.items.some((item) => item.input.type === 'submitted')) clock.now += TTL + 5_000;
      return stored;
    },
  };
  const a = runner('A', hostA, clock, stallingEngine);
  const b = runner('B', hostB, clock);
  await a.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  await a.settled(queue.id);
  stall = true;
  // Answered as decided elsewhere: the decision is in the log, and A wrote nothing of it.
  expect(await a.dispatch(queue.id, submitted)).toBe(false);
  expect(await db.stores.entries.findById(entryId)).toBeNull();
  expect(hostA.startedFor(queue.id)).toEqual([]);
  await b.start();
  await b.settled(queue.id);
  const entry = await db.stores.entries.findById(entryId);
  expect(entry?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  expect(hostB.startedFor(queue.id)).toHaveLength(1);
  const submits = (await db.stores.engine.decisionsAfter(queue.id, 0, 100)).filter((d) => d.items.some((item) => item.input.type === 'submitted'));
  expect(submits).toHaveLength(1);
  await a.stop();
  await b.stop();
});

test('a writer that dies between storing a decision and taking its inputs off the inbox: the next writer applies them once', async () => {
  const { queue, entryId, submitted } = await queueWithEntry();
  const clock = { now: 3_000_000 };
  const hostA = recordingHost();
  const hostB = recordingHost();
  let dying = false;
  const dyingEngine = {
    ...db.stores.engine,
    async acknowledge(ids: string[]) {
      if (dying) throw new Error('the process died here');
      return db.stores.engine.acknowledge(ids);
    },
  };
  const a = runner('A', hostA, clock, dyingEngine);
  await a.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  // Idle first: a host-action loop still running from that decision would pick the next one up from the log.
  await a.settled(queue.id);
  dying = true;
  // Through the inbox (as from another replica): A decides it and dies before acknowledging it.
  await a.record(queue.id, submitted);
  await settle();
  await a.stop();
  // The decision is stored; its input is still in the inbox.
  expect((await db.stores.engine.pending(queue.id, 10)).map((item) => item.input.type)).toContain('submitted');

  clock.now += TTL + 5_000;
  const b = runner('B', hostB, clock);
  await b.settled(queue.id);
  expect(await db.stores.engine.pending(queue.id, 10)).toEqual([]);
  const entry = await db.stores.entries.findById(entryId);
  expect(entry?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  const state = await b.engineState(queue.id);
  expect(state?.entries.filter((e) => e.id === entryId)).toHaveLength(1);
  expect(state?.runs).toHaveLength(1);
  expect(hostA.startedFor(queue.id)).toEqual([]);
  expect(hostB.startedFor(queue.id)).toHaveLength(1);
  await b.stop();
});

test('a writer that takes its lease back after another held it decides from the state that writer left, not its own', async () => {
  const queue = await insertQueue(db.stores, `lease${++repoCounter}`);
  const clock = { now: 4_000_000 };
  // A snapshot after every decision: the writer in between compacts the versions A would go on from.
  const a = runner('A', recordingHost(), clock, db.stores.engine, 1);
  const b = runner('B', recordingHost(), clock, db.stores.engine, 1);
  await a.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  expect(await a.dispatch(queue.id, (await claimEntry(db.stores, queue.id, 1)).submitted)).toBe(true);
  await a.settled(queue.id);
  // A stalls past its lease; B takes over, decides three submits and hands the queue back (a rolling restart).
  clock.now += TTL + 5_000;
  for (let pr = 2; pr <= 4; pr++) expect(await b.dispatch(queue.id, (await claimEntry(db.stores, queue.id, pr)).submitted)).toBe(true);
  await b.settled(queue.id);
  await b.stop();
  // A wakes with a submit of its own.
  expect(await a.dispatch(queue.id, (await claimEntry(db.stores, queue.id, 5)).submitted)).toBe(true);
  await a.settled(queue.id);
  const prsOf = (state: { entries: Array<{ prNumber: number }> } | null | undefined) => state?.entries.map((e) => e.prNumber).sort((x, y) => x - y);
  expect(prsOf(await a.engineState(queue.id))).toEqual([1, 2, 3, 4, 5]);
  const stored = await db.stores.engine.load(queue.id);
  expect(prsOf(stored && loadState(stored.snapshot, stored.decisions))).toEqual([1, 2, 3, 4, 5]);
  await a.stop();
});
