/**
 * The maintenance reads again the NOT_READY PRs whose facts the host has not settled. It takes them from the
 * queue's writer, which holds them in memory (a query by queue and state reads every entry stored on the local
 * FerretDB, every 15 seconds for every queue): the writer answers with the mergeability the engine was told,
 * another replica with nothing. The same for whether a queue holds PRs (its branch head is read again now and then).
 */
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { refreshWaitingFacts } from '../../src/runner/refresh-waiting-facts.js';
import { claimEntry, insertQueue, prFacts, quietHost, silentLog, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('waiting_prs');

test('the writer names its NOT_READY PRs with their mergeability; a replica that is not the writer names none', async () => {
  const at = new Date();
  const queueId = (await insertQueue(db.stores, 'waiting', { at })).id;
  const hosts = gitHostRegistry({ 'fake.example': quietHost() });
  const writer = new QueueRunner({ stores: db.stores, hosts, log: silentLog, owner: 'A', pollMs: 60_000 });
  const other = new QueueRunner({ stores: db.stores, hosts, log: silentLog, owner: 'B', pollMs: 60_000 });
  await writer.dispatch(queueId, { type: 'base_moved', sha: 'base0' });
  const computing = await claimEntry(db.stores, queueId, 1, { at, facts: { ...prFacts(1), mergeability: 'in_progress' } });
  const unread = await claimEntry(db.stores, queueId, 2, { at, facts: null });
  const ready = await claimEntry(db.stores, queueId, 3, { at });
  for (const { submitted } of [computing, unread, ready]) await writer.dispatch(queueId, submitted);
  await writer.settled(queueId);

  expect(writer.waitingPullRequests(queueId)).toEqual([
    { entryId: computing.entryId, prNumber: 1, mergeability: 'in_progress' },
    { entryId: unread.entryId, prNumber: 2, mergeability: null },
  ]);
  expect(other.waitingPullRequests(queueId)).toBeNull();
  // The same for the branch-head read: the writer knows its queue holds PRs.
  expect(writer.enqueuedCount(queueId)).toBe(3);
  expect(other.enqueuedCount(queueId)).toBeNull();

  // Through the maintenance task as composed: the two are read again, once, by the writer's replica only.
  const read: number[] = [];
  const events = { pullRequestChanged: async (_repo: unknown, n: number) => void read.push(n), testRunFinished: async () => undefined, branchMoved: async () => undefined, hostAccess: async () => undefined };
  for (const runner of [writer, other]) await refreshWaitingFacts(db.stores, events, (id) => runner.waitingPullRequests(id), [queueId]);
  expect(read).toEqual([1, 2]);
  await Promise.all([writer.stop(), other.stop()]);
});

test('the writer’s tenure is the same object from decision to decision, none on another replica, and another once a replica wrote between', async () => {
  const clock = { now: 1_000_000 };
  const TTL = 30_000;
  const queueId = (await insertQueue(db.stores, 'tenure')).id;
  const hosts = gitHostRegistry({ 'fake.example': quietHost() });
  const runner = (owner: string) => new QueueRunner({ stores: db.stores, hosts, log: silentLog, owner, now: () => clock.now, leaseTtlMs: TTL, pollMs: 60_000 });
  const a = runner('A');
  const b = runner('B');
  await a.dispatch(queueId, { type: 'base_moved', sha: 'base0' });
  const first = a.writerTenure(queueId);
  expect(first).not.toBeNull();
  expect(b.writerTenure(queueId)).toBeNull();
  // Renewed without a break (two thirds of the lease used): the same tenure.
  clock.now += (TTL * 3) / 4;
  await a.dispatch(queueId, { type: 'base_moved', sha: 'base1' });
  expect(a.writerTenure(queueId)).toBe(first);
  // A's lease runs out: no tenure; B writes the queue, then A takes it back: another tenure.
  clock.now += TTL + 1_000;
  expect(a.writerTenure(queueId)).toBeNull();
  await b.dispatch(queueId, { type: 'base_moved', sha: 'base2' });
  expect(b.writerTenure(queueId)).not.toBeNull();
  clock.now += TTL + 1_000;
  await a.dispatch(queueId, { type: 'base_moved', sha: 'base3' });
  const again = a.writerTenure(queueId);
  expect(again).not.toBeNull();
  expect(again).not.toBe(first);
  await Promise.all([a.stop(), b.stop()]);
});
