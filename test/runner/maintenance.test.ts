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
  const count = await refreshWaitingFacts(stores, events, (queueId) => (queueId === 'q' ? waiting : null), ['q', 'elsewhere'], now);
  expect(read).toEqual([1, 3, 4]);
  expect(count).toBe(3);
  expect(readById).toEqual(['e2', 'e3']);
});
