import { Maintenance } from '../../src/runner/maintenance.js';
import { NOT_MERGEABLE_REREAD_MS, refreshWaitingFacts, type WaitingPullRequest } from '../../src/runner/refresh-waiting-facts.js';
import type { PullRequestFacts, QueueEntryRecord } from '../../src/domain/records.js';
import type { Stores } from '../../src/ports/stores.js';

test('a task with everyMs runs on the first round, then at most that often; others every round', async () => {
  let now = 0;
  const calls = { often: 0, slow: 0 };
  const maintenance = new Maintenance(
    [
      { name: 'often', run: async () => calls.often++ },
      { name: 'slow', everyMs: 1_000, run: async () => calls.slow++ },
    ],
    { warn: () => undefined },
    () => now,
  );
  for (const at of [0, 400, 999, 1_000, 1_500, 2_100]) {
    now = at;
    await maintenance.round();
  }
  expect(calls).toEqual({ often: 6, slow: 3 }); // at 0, 1,000 and 2,100
});

const facts = (mergeability: PullRequestFacts['mergeability'], readAt: number): PullRequestFacts => ({
  title: 't',
  author: 'a',
  headSha: 'h',
  baseBranch: 'main',
  open: true,
  draft: false,
  merged: false,
  mergeability,
  url: 'u',
  readAt: new Date(readAt),
});

test('NOT_READY PRs are read again: unsettled facts every round, a "not mergeable" verdict only once it is old', async () => {
  const now = 10 * NOT_MERGEABLE_REREAD_MS;
  // As the queue's writer holds them, and the stored facts of the two "not mergeable" ones (read only for their age).
  const waiting: WaitingPullRequest[] = [
    { entryId: 'e1', prNumber: 1, mergeability: 'in_progress' },
    { entryId: 'e2', prNumber: 2, mergeability: 'not_mergeable' },
    { entryId: 'e3', prNumber: 3, mergeability: 'not_mergeable' },
    { entryId: 'e4', prNumber: 4, mergeability: null },
    { entryId: 'e5', prNumber: 5, mergeability: 'mergeable' },
  ];
  const stored = new Map([
    ['e2', { facts: facts('not_mergeable', now - 1_000) }],
    ['e3', { facts: facts('not_mergeable', now - NOT_MERGEABLE_REREAD_MS) }],
  ]);
  const readById: string[] = [];
  const stores = {
    queues: { findById: async () => ({ id: 'q', repo: { host: 'github.com', owner: 'o', name: 'r' } }) },
    entries: {
      findById: async (id: string) => (readById.push(id), (stored.get(id) ?? null) as QueueEntryRecord | null),
      page: async () => {
        throw new Error('the entries are not queried: the writer holds them');
      },
    },
  } as unknown as Stores;
  const read: number[] = [];
  const events = { pullRequestChanged: async (_repo: unknown, n: number) => void read.push(n), testRunFinished: async () => undefined, branchMoved: async () => undefined, hostAccess: async () => undefined };
  // Queue q is written here; queue elsewhere by another replica, which refreshes it.
  const checked = new Map<string, number>();
  const count = await refreshWaitingFacts(stores, events, (queueId) => (queueId === 'q' ? waiting : null), ['q', 'elsewhere'], now, checked);
  expect(read).toEqual([1, 3, 4]);
  expect(count).toBe(3);
  expect(readById).toEqual(['e2', 'e3']);

  // The next rounds (15 s apart) read no verdict's age again until it is due (found by review: a read by id per
  // blocked PR every round); unsettled facts are asked for every round.
  read.length = 0;
  readById.length = 0;
  await refreshWaitingFacts(stores, events, () => waiting, ['q'], now + 15_000, checked);
  expect(read).toEqual([1, 4]);
  expect(readById).toEqual([]);
  // e2's verdict (read 1 s before the first round) is due again; e3 was asked for in the first round, so not yet.
  await refreshWaitingFacts(stores, events, () => waiting, ['q'], now + NOT_MERGEABLE_REREAD_MS - 500, checked);
  expect(readById).toEqual(['e2']);
  expect(read).toEqual([1, 4, 1, 2, 4]);
});

test('the thousand reads a round are counted among the PRs due: one waiting past a thousand settled ones is read', async () => {
  const waiting: WaitingPullRequest[] = [
    ...Array.from({ length: 1_000 }, (_, i) => ({ entryId: `m${i}`, prNumber: 10_000 + i, mergeability: 'mergeable' as const })),
    { entryId: 'late', prNumber: 7, mergeability: null },
  ];
  const stores = { queues: { findById: async () => ({ id: 'q', repo: { host: 'github.com', owner: 'o', name: 'r' } }) } } as unknown as Stores;
  const read: number[] = [];
  const events = { pullRequestChanged: async (_repo: unknown, n: number) => void read.push(n), testRunFinished: async () => undefined, branchMoved: async () => undefined, hostAccess: async () => undefined };
  expect(await refreshWaitingFacts(stores, events, () => waiting, ['q'], 0)).toBe(1);
  expect(read).toEqual([7]);
});
