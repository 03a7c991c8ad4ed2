import { Maintenance } from '../../src/runner/maintenance.js';
import { NOT_MERGEABLE_REREAD_MS, refreshWaitingFacts } from '../../src/runner/refresh-waiting-facts.js';
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
  const entries = [
    { prNumber: 1, facts: facts('in_progress', now) },
    { prNumber: 2, facts: facts('not_mergeable', now - 1_000) },
    { prNumber: 3, facts: facts('not_mergeable', now - NOT_MERGEABLE_REREAD_MS) },
    { prNumber: 4, facts: null },
    { prNumber: 5, facts: facts('mergeable', 0) },
  ] as unknown as QueueEntryRecord[];
  const stores = {
    queues: { findById: async () => ({ id: 'q', repo: { host: 'github.com', owner: 'o', name: 'r' } }) },
    entries: { page: async () => entries },
  } as unknown as Stores;
  const read: number[] = [];
  const count = await refreshWaitingFacts(stores, { pullRequestChanged: async (_repo, n) => void read.push(n), testRunFinished: async () => undefined, branchMoved: async () => undefined, hostAccess: async () => undefined }, ['q'], now);
  expect(read).toEqual([1, 3, 4]);
  expect(count).toBe(3);
});
