/**
 * PR status reads kept in memory while this replica writes the queue: used only within the tenure they were read
 * under, following every decision recorded here (the runner's copy, or read again), never kept from a read a
 * decision about the same entry overlapped, never for an ended PR.
 */
import type { ImpactedTargetsRecord, QueueEntryRecord } from '../../src/domain/records.js';
import type { PullRequestState } from '../../src/domain/pull-request-state.js';
import { PullRequestStatusCache, type PullRequestStatus } from '../../src/queue/status-cache.js';

const QUEUE = 'q1';

function entry(prNumber: number, state: PullRequestState = 'PENDING', headSha = `head${prNumber}`): QueueEntryRecord {
  const at = new Date(0);
  return {
    id: `entry${prNumber}`,
    queueId: QUEUE,
    prNumber,
    attempt: 1,
    state,
    priority: 2,
    noBatch: false,
    submittedAt: at,
    stateChangedAt: at,
    concludedAt: null,
    facts: { headSha, baseBranch: 'main', title: `PR ${prNumber}`, author: 'a', open: true, draft: false, merged: false, mergeability: 'mergeable', readAt: at },
    timeline: [],
    recordedKey: 0,
  };
}

const targets = (prNumber: number, name: string): ImpactedTargetsRecord => ({ queueId: QUEUE, prNumber, sha: `head${prNumber}`, targets: [name], setAt: new Date(0) });

/** A database as the cache's loads see it, counting reads; a tenure the test moves. */
function world() {
  const stored = new Map<number, PullRequestStatus>();
  const written = new Map<string, QueueEntryRecord>();
  let tenure: object | null = {};
  let reads = 0;
  const cache = new PullRequestStatusCache({ writerTenure: () => tenure }, (id) => written.get(id) ?? null);
  const read = (prNumber: number) =>
    cache.read(QUEUE, prNumber, async () => {
      reads++;
      return stored.get(prNumber) ?? null;
    });
  return {
    cache,
    stored,
    written,
    read,
    reads: () => reads,
    setTenure: (next: object | null) => (tenure = next),
    /** The runner writes an entry (database and its own copy) and records the decision. */
    decide(next: QueueEntryRecord, options: { remembered?: boolean; uploaded?: boolean } = {}) {
      stored.set(next.prNumber, { entry: next, targets: stored.get(next.prNumber)?.targets ?? null });
      if (options.remembered !== false) written.set(next.id, next);
      else written.delete(next.id);
      cache.recorded({ queueId: QUEUE, from: 0, to: 1, entryIds: [next.id], targetsOf: options.uploaded ? [next.prNumber] : [] });
    },
  };
}

test('a status read while this replica writes the queue is kept: polls after the first read nothing', async () => {
  const w = world();
  w.stored.set(1, { entry: entry(1), targets: targets(1, '//a') });
  expect((await w.read(1))?.targets?.targets).toEqual(['//a']);
  expect((await w.read(1))?.entry.state).toBe('PENDING');
  expect((await w.read(1))?.entry.state).toBe('PENDING');
  expect(w.reads()).toBe(1);
  expect(await w.read(2)).toBeNull(); // Never submitted: read each time (not kept).
  expect(await w.read(2)).toBeNull();
  expect(w.reads()).toBe(3);
});

test('a replica that does not write the queue reads every time; a new tenure reads again', async () => {
  const w = world();
  w.stored.set(1, { entry: entry(1), targets: null });
  w.setTenure(null);
  await w.read(1);
  await w.read(1);
  expect(w.reads()).toBe(2);
  // Another replica may have written meanwhile: what was kept under an earlier tenure is not used.
  w.setTenure({});
  await w.read(1);
  w.stored.set(1, { entry: entry(1, 'TESTING'), targets: null }); // Written by another writer in between.
  w.setTenure({});
  expect((await w.read(1))?.entry.state).toBe('TESTING');
  expect(w.reads()).toBe(4);
});

test('a decision about a kept PR: the runner’s copy is taken, targets kept while the head stays; else read again', async () => {
  const w = world();
  w.stored.set(1, { entry: entry(1), targets: targets(1, '//a') });
  await w.read(1);
  w.decide(entry(1, 'TESTING'));
  expect(await w.read(1)).toMatchObject({ entry: { state: 'TESTING' }, targets: { targets: ['//a'] } });
  expect(w.reads()).toBe(1);

  // The runner no longer remembers its copy: read again.
  w.decide(entry(1, 'TESTS_PASSED'), { remembered: false });
  expect((await w.read(1))?.entry.state).toBe('TESTS_PASSED');
  expect(w.reads()).toBe(2);

  // A new head may have other targets: read again.
  w.stored.set(1, { entry: entry(1, 'PENDING', 'head1b'), targets: targets(1, '//b') });
  w.decide(entry(1, 'PENDING', 'head1b'));
  expect((await w.read(1))?.targets?.targets).toEqual(['//b']);
  expect(w.reads()).toBe(3);

  // An upload decided for the PR: read again.
  w.stored.set(1, { entry: entry(1, 'PENDING', 'head1b'), targets: targets(1, '//c') });
  w.cache.recorded({ queueId: QUEUE, from: 1, to: 2, entryIds: [], targetsOf: [1] });
  expect((await w.read(1))?.targets?.targets).toEqual(['//c']);
  expect(w.reads()).toBe(4);
});

test('a NOT_READY PR is not kept: an upload through another replica is stored before the writer decides it', async () => {
  const w = world();
  w.stored.set(1, { entry: entry(1, 'NOT_READY'), targets: null });
  expect((await w.read(1))?.targets).toBeNull();
  // Another replica stored the upload (its input waits in the inbox for the writer's next poll).
  w.stored.set(1, { entry: entry(1, 'NOT_READY'), targets: targets(1, '//a') });
  expect((await w.read(1))?.targets?.targets).toEqual(['//a']);
  expect(w.reads()).toBe(2);
  // Admitted: kept from then on.
  w.decide(entry(1, 'PENDING'));
  await w.read(1);
  await w.read(1);
  expect(w.reads()).toBe(3);
});

test('an ended PR is not kept, and a decision that ends a kept one makes it read again', async () => {
  const w = world();
  w.stored.set(1, { entry: entry(1), targets: null });
  await w.read(1);
  w.decide(entry(1, 'CANCELLED'));
  expect((await w.read(1))?.entry.state).toBe('CANCELLED');
  expect((await w.read(1))?.entry.state).toBe('CANCELLED');
  expect(w.reads()).toBe(3);
});

test('a read overlapped by a decision naming its entry is not kept; one naming another entry does not matter', async () => {
  const w = world();
  w.stored.set(1, { entry: entry(1), targets: null });
  w.stored.set(2, { entry: entry(2), targets: null });
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  // The load reads the old entry, then the decision is recorded before the load returns.
  const overlapped = w.cache.read(QUEUE, 1, async () => {
    const before = w.stored.get(1) ?? null;
    await held;
    return before;
  });
  const other = w.cache.read(QUEUE, 2, async () => {
    const before = w.stored.get(2) ?? null;
    await held;
    return before;
  });
  w.decide(entry(1, 'TESTING'), { remembered: false });
  release();
  expect((await overlapped)?.entry.state).toBe('PENDING'); // What was read, as any read racing a decision may see.
  await other;
  expect((await w.read(1))?.entry.state).toBe('TESTING'); // Not kept: read again.
  expect((await w.read(2))?.entry.state).toBe('PENDING'); // Kept.
  expect(w.reads()).toBe(1);
});

test("a submit answered here keeps the runner's copy of its entry: the first poll reads nothing and follows later decisions", async () => {
  const w = world();
  const mark = w.cache.mark(QUEUE);
  w.decide(entry(1, 'PENDING'));
  w.cache.submitted(mark, 1, 'entry1');
  expect((await w.read(1))?.entry.state).toBe('PENDING');
  expect(w.reads()).toBe(0);
  w.decide(entry(1, 'TESTING'));
  expect((await w.read(1))?.entry.state).toBe('TESTING');
  expect(w.reads()).toBe(0);
  w.decide(entry(1, 'MERGED')); // Ended: no longer kept, read from the database.
  expect((await w.read(1))?.entry.state).toBe('MERGED');
  expect(w.reads()).toBe(1);
});

test('a submit keeps nothing where the runner has no copy, for NOT_READY, or on a replica that does not write the queue', async () => {
  const w = world();
  w.stored.set(1, { entry: entry(1), targets: null }); // Stored, but not written by this process's runner.
  w.cache.submitted(w.cache.mark(QUEUE), 1, 'entry1');
  await w.read(1);
  expect(w.reads()).toBe(1);
  w.decide(entry(2, 'NOT_READY'));
  w.cache.submitted(w.cache.mark(QUEUE), 2, 'entry2');
  await w.read(2);
  expect(w.reads()).toBe(2);
  w.setTenure(null);
  const elsewhere = w.cache.mark(QUEUE);
  w.setTenure({});
  w.decide(entry(3, 'PENDING'));
  w.cache.submitted(elsewhere, 3, 'entry3');
  await w.read(3);
  expect(w.reads()).toBe(3);
  w.cache.submitted(w.cache.mark(QUEUE), 4, 'entry3'); // Another PR's entry id: not kept under this PR.
  expect(await w.read(4)).toBeNull();
  expect(w.reads()).toBe(4);
});

// Found in review: targets uploaded through another replica, decided after the submit read none, must show.
test('a submit keeps nothing when a decision took in targets for the PR since it began, or the tenure changed meanwhile', async () => {
  const w = world();
  const mark = w.cache.mark(QUEUE);
  w.decide(entry(1));
  w.stored.set(1, { entry: entry(1), targets: targets(1, '//a') });
  w.decide(entry(1), { uploaded: true });
  w.cache.submitted(mark, 1, 'entry1');
  expect((await w.read(1))?.targets?.targets).toEqual(['//a']);
  expect(w.reads()).toBe(1);
  const before = w.cache.mark(QUEUE);
  w.decide(entry(2));
  w.setTenure({}); // Another tenure began: decisions a new writer replays are not told here.
  w.cache.submitted(before, 2, 'entry2');
  await w.read(2);
  expect(w.reads()).toBe(2);
});
