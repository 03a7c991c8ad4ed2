/**
 * Views of the whole queue (getQueue, a page of listPullRequests) read the
 * database a bounded number of times whatever the number of PRs: no query per PR.
 */
import mongoose from 'mongoose';
import { EnqueuedEntriesCache } from '../../src/queue/enqueued-cache.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';

let h: ApiHarness;
let token: string;
/** Queries per collection while counting. */
let counting: Map<string, number> | null = null;
beforeAll(async () => {
  h = await startApiHarness({ prefix: 'view_queries', sandboxTimeScale: 0.02 });
  token = await h.tokenFor('demo', 'sandbox');
  mongoose.set('debug', (collection: string) => {
    counting?.set(collection, (counting.get(collection) ?? 0) + 1);
  });
});
afterAll(async () => {
  mongoose.set('debug', false);
  await h.close();
});

/** Calls on one sandbox repository's main queue, expecting 200. */
const callsOn = (name: string) => async (path: string, body: object) => {
  const res = await h.post(path, { repo: { host: 'sandbox', owner: 'demo', name }, targetBranch: 'main', ...body }, token);
  expect(res.statusCode).toBe(200);
  return res.json();
};
const post = callsOn('views');

/** The queries the view made on the collections views read, PR data and targets. */
async function queriesOf(view: () => Promise<unknown>): Promise<number> {
  // The runner's own work on these PRs is done first, so only the view is counted.
  await h.app.queueRunner.settled((await post('/v1/getQueue', {})).id);
  counting = new Map();
  await view();
  const counted = counting;
  counting = null;
  return ['queue_entries', 'queue_entry_keys', 'impacted_target_sets', 'impacted_target_parts', 'impacted_target_heads'].reduce((sum, c) => sum + (counted.get(c) ?? 0), 0);
}

async function submitUpTo(count: number, from: number) {
  for (let n = from; n <= count; n++) {
    await post('/v1/submitPullRequest', { pr: { number: n } });
    // Half of them with targets, some as ALL: the views read both kinds.
    if (n % 2 === 0) await post('/v1/setImpactedTargets', { pr: { number: n, sha: (await post('/v1/getSubmittedPullRequest', { pr: { number: n } })).prSha }, impactedTargets: n % 4 === 0 ? 'ALL' : [`//t${n}`] });
  }
}

test('getQueue and a listPullRequests page cost the same number of queries with 5 and with 40 PRs', async () => {
  await post('/v1/createQueue', {});
  await post('/v1/updateQueue', { state: 'PAUSED' });
  await submitUpTo(5, 1);
  const few = { queue: await queriesOf(() => post('/v1/getQueue', {})), page: await queriesOf(() => post('/v1/listPullRequests', { take: 50 })) };
  await submitUpTo(40, 6);
  const queue = await post('/v1/getQueue', {});
  expect(queue.enqueuedPullRequests).toHaveLength(40);
  expect(queue.enqueuedPullRequests.filter((pr: { impactedTargets?: unknown }) => pr.impactedTargets !== undefined)).toHaveLength(20);
  const many = { queue: await queriesOf(() => post('/v1/getQueue', {})), page: await queriesOf(() => post('/v1/listPullRequests', { take: 50 })) };
  expect(many).toEqual(few);
  expect(many.queue).toBeLessThanOrEqual(3);
});

test('getQueue reads no entry again while the runner has recorded nothing since the last view; a submit is seen at once', async () => {
  const call = callsOn('cached');
  await call('/v1/createQueue', {});
  await call('/v1/updateQueue', { state: 'PAUSED' });
  for (const n of [1, 2, 3]) await call('/v1/submitPullRequest', { pr: { number: n } });
  await h.app.queueRunner.settled((await call('/v1/getQueue', {})).id);
  const entryQueries = async () => {
    counting = new Map();
    const view = await call('/v1/getQueue', {});
    const entries = counting.get('queue_entries') ?? 0;
    counting = null;
    return { entries, prs: view.enqueuedPullRequests.map((pr: { prNumber: number }) => pr.prNumber) };
  };
  await entryQueries(); // Fills the cache after the runner's last write.
  expect(await entryQueries()).toEqual({ entries: 0, prs: [1, 2, 3] });
  const { id } = await call('/v1/submitPullRequest', { pr: { number: 4 } });
  expect(id).toBeDefined();
  // Seen at once (the submit's answer waited for its decision, recorded before the answer).
  const immediate = await call('/v1/getQueue', {});
  expect(immediate.enqueuedPullRequests.map((pr: { prNumber: number }) => pr.prNumber)).toEqual([1, 2, 3, 4]);
  // Counted once the runner's own work on it is done (its reads of entries would be counted too).
  await h.app.queueRunner.settled(immediate.id);
  const cold = await entryQueries();
  expect(cold.prs).toEqual([1, 2, 3, 4]);
  expect(await entryQueries()).toEqual({ entries: 0, prs: [1, 2, 3, 4] });
  await call('/v1/cancelPullRequest', { pr: { number: 2 } });
  expect((await entryQueries()).prs).toEqual([1, 3, 4]);
});

test('a PR status read on the replica that writes its queue is answered from memory, and after each decision about it shows what the database holds', async () => {
  const call = callsOn('status');
  const { id: queueId } = await call('/v1/createQueue', {});
  await call('/v1/updateQueue', { state: 'PAUSED' });
  for (const n of [1, 2]) await call('/v1/submitPullRequest', { pr: { number: n } });
  const upload = async (n: number, impactedTargets: string[] | 'ALL') =>
    call('/v1/setImpactedTargets', { pr: { number: n, sha: (await call('/v1/getSubmittedPullRequest', { pr: { number: n } })).prSha }, impactedTargets });
  await upload(2, ['//a']);
  const shown = (pr: { prNumber: number; state: string; priorityValue: number; impactedTargets?: unknown }) =>
    `${pr.prNumber}:${pr.state}:${pr.priorityValue}:${JSON.stringify(pr.impactedTargets ?? null)}`;
  /** Both PRs as a status read shows them, the queries the reads made by collection, and what the database holds. */
  const read = async () => {
    await h.app.queueRunner.settled(queueId);
    counting = new Map();
    const views = [await call('/v1/getSubmittedPullRequest', { pr: { number: 1 } }), await call('/v1/getSubmittedPullRequest', { pr: { number: 2 } })];
    const counted = counting;
    counting = null;
    const stored = [];
    for (const n of [1, 2]) {
      const entry = await h.stores.entries.find(queueId, n);
      const targets = entry ? await h.stores.impactedTargets.latest(queueId, n, entry.facts?.headSha) : null;
      stored.push(`${n}:${entry?.state}:${entry?.priority}:${JSON.stringify(targets?.targets ?? null)}`);
    }
    const reads = Object.fromEntries(['api_tokens', 'queue_entry_keys', 'queue_entries', 'impacted_target_sets', 'impacted_target_heads'].map((c) => [c, counted.get(c) ?? 0]));
    return { shown: views.map(shown), stored, reads };
  };
  await read(); // The first read of each is from the database.
  // The token is looked up on every request (a revoked token is refused at once); nothing else is read.
  const fromMemory = { api_tokens: 2, queue_entry_keys: 0, queue_entries: 0, impacted_target_sets: 0, impacted_target_heads: 0 };
  expect((await read()).reads).toEqual(fromMemory);
  const steps: Array<() => Promise<unknown>> = [
    () => upload(1, ['//b']),
    () => call('/v1/submitPullRequest', { pr: { number: 2 }, priority: 'high' }),
    () => upload(2, 'ALL'),
    () => call('/v1/cancelPullRequest', { pr: { number: 1 } }),
    () => call('/v1/submitPullRequest', { pr: { number: 1 } }),
  ];
  for (const step of steps) {
    await step();
    const { shown: after, stored } = await read();
    expect(after).toEqual(stored);
  }
  expect((await read()).shown).toEqual([expect.stringMatching(/^1:PENDING:.*\["\/\/b"\]$/), expect.stringMatching(/^2:PENDING:.*"ALL"$/)]);
  expect((await read()).reads).toEqual(fromMemory);
});

test('getQueue follows the decisions this replica records: after submits, a priority change, a cancel, a re-submit and target uploads it reads no queue of entries or target sets, and shows what the database holds', async () => {
  const call = callsOn('follows');
  const { id: queueId } = await call('/v1/createQueue', {});
  await call('/v1/updateQueue', { state: 'PAUSED' });
  for (const n of [1, 2, 3, 4, 5]) await call('/v1/submitPullRequest', { pr: { number: n } });
  const upload = async (n: number, impactedTargets: string[] | 'ALL') =>
    call('/v1/setImpactedTargets', { pr: { number: n, sha: (await call('/v1/getSubmittedPullRequest', { pr: { number: n } })).prSha }, impactedTargets });
  await upload(1, ['//a']);
  await h.app.queueRunner.settled(queueId);
  await call('/v1/getQueue', {}); // Read whole once: the cache follows from here.
  /** A view, the queries by queue it made on entries and target sets (reads by id are findOne), and what the database holds. */
  const view = async () => {
    const queries: string[] = [];
    mongoose.set('debug', (collection: string, method: string) => {
      if ((collection === 'queue_entries' || collection === 'impacted_target_sets') && method === 'find') queries.push(collection);
    });
    const shown = await call('/v1/getQueue', {});
    mongoose.set('debug', (collection: string) => {
      counting?.set(collection, (counting.get(collection) ?? 0) + 1);
    });
    const stored = await h.stores.entries.listEnqueued(queueId);
    const targets = await h.stores.impactedTargets.latestForMany(
      queueId,
      stored.map((e) => ({ prNumber: e.prNumber, ...(e.facts?.headSha ? { sha: e.facts.headSha } : {}) })),
    );
    return {
      queries,
      shown: shown.enqueuedPullRequests.map(
        (pr: { prNumber: number; state: string; priorityValue: number; impactedTargets?: unknown }) => `${pr.prNumber}:${pr.state}:${pr.priorityValue}:${JSON.stringify(pr.impactedTargets ?? null)}`,
      ),
      stored: stored.map((e) => `${e.prNumber}:${e.state}:${e.priority}:${JSON.stringify(targets.get(e.prNumber)?.targets ?? null)}`),
    };
  };
  const steps: Array<() => Promise<unknown>> = [
    () => call('/v1/submitPullRequest', { pr: { number: 6 } }),
    () => upload(3, ['//b', '//c']),
    () => call('/v1/submitPullRequest', { pr: { number: 4 }, priority: 'high' }),
    () => upload(5, 'ALL'),
    () => call('/v1/cancelPullRequest', { pr: { number: 2 } }),
    () => upload(3, ['//d']),
    () => call('/v1/submitPullRequest', { pr: { number: 2 } }),
    () => call('/v1/cancelPullRequest', { pr: { number: 1 } }),
  ];
  for (const step of steps) {
    await step();
    await h.app.queueRunner.settled(queueId);
    const { queries, shown, stored } = await view();
    expect(shown).toEqual(stored);
    expect(queries).toEqual([]);
  }
  // Targets shown, not only none.
  expect((await view()).shown).toEqual(expect.arrayContaining([expect.stringMatching(/^3:.*\["\/\/d"\]$/), expect.stringMatching(/^5:.*"ALL"$/)]));
});

test('what no decision names (an entry written whole, as an import or a submit of an older release whose writer then died writes it) shows once the followed view is older than its bound', async () => {
  const call = callsOn('bounded');
  const { id: queueId } = await call('/v1/createQueue', {});
  await call('/v1/updateQueue', { state: 'PAUSED' });
  await call('/v1/submitPullRequest', { pr: { number: 1 } });
  const views = new EnqueuedEntriesCache({ maxAgeMs: 300 });
  h.app.queueRunner.onRecorded((change) => void views.recorded(h.stores, change));
  await h.app.queueRunner.settled(queueId);
  const shown = async () => (await views.enqueued(h.stores, queueId)).map((e) => e.prNumber);
  expect(await shown()).toEqual([1]);
  // An entry no decision will ever name (a submit now claims its PR instead, and the runner writes the entry).
  const at = new Date();
  await h.stores.entries.insert({ queueId, prNumber: 9, attempt: 1, state: 'NOT_READY', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, facts: null, timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }] });
  await call('/v1/submitPullRequest', { pr: { number: 2 } });
  await h.app.queueRunner.settled(queueId);
  expect(await shown()).toEqual([1, 2]); // Followed: the decision named PR 2 only.
  await new Promise((resolve) => setTimeout(resolve, 350));
  expect(await shown()).toEqual([1, 9, 2]); // In submission order.
});

test("a PR's first status read after its submit on the replica that writes its queue reads nothing but the token, and shows what the database holds", async () => {
  const call = callsOn('first-poll');
  const { id: queueId } = await call('/v1/createQueue', {});
  await call('/v1/updateQueue', { state: 'PAUSED' });
  await call('/v1/submitPullRequest', { pr: { number: 1 } });
  await h.app.queueRunner.settled(queueId);
  counting = new Map();
  const view = await call('/v1/getSubmittedPullRequest', { pr: { number: 1 } });
  const counted = counting;
  counting = null;
  const reads = Object.fromEntries(['api_tokens', 'queue_entry_keys', 'queue_entries', 'impacted_target_sets', 'impacted_target_heads'].map((c) => [c, counted.get(c) ?? 0]));
  expect(reads).toEqual({ api_tokens: 1, queue_entry_keys: 0, queue_entries: 0, impacted_target_sets: 0, impacted_target_heads: 0 });
  const stored = await h.stores.entries.find(queueId, 1);
  expect({ state: view.state, prSha: view.prSha, impactedTargets: view.impactedTargets }).toEqual({ state: stored?.state, prSha: stored?.facts?.headSha, impactedTargets: undefined });
  expect(view.state).toBe('PENDING');
});

// Found by a cost review: every scrape (every 15 to 30 s) read every enqueued entry of every queue.
test('getMergeQueueMetrics reads no entry again while the runner has recorded nothing since the last scrape', async () => {
  const call = callsOn('metrics');
  await call('/v1/createQueue', {});
  await call('/v1/updateQueue', { state: 'PAUSED' });
  for (const n of [1, 2, 3]) await call('/v1/submitPullRequest', { pr: { number: n } });
  await h.app.queueRunner.settled((await call('/v1/getQueue', {})).id);
  const scrape = async () => {
    counting = new Map();
    const res = await h.app.inject({ method: 'GET', url: '/v1/getMergeQueueMetrics?repo=demo/metrics&repoHost=sandbox', headers: { 'x-api-token': token } });
    const entries = counting.get('queue_entries') ?? 0;
    counting = null;
    expect(res.statusCode).toBe(200);
    return { entries, depth: /mq_depth_current\{[^}]*\} (\d+)/.exec(res.body)?.[1] };
  };
  await scrape();
  // The hour's changes are still read (history, not the queue); the enqueued entries are not.
  const before = await scrape();
  const again = await scrape();
  expect(again).toEqual(before);
  expect(again.depth).toBe('3');
  // One query of the entries: the hour's changes.
  expect(again.entries).toBe(1);
});

// Found by a cost review: the dashboard asks about once a second while a queue changes, and each ask read the day's
// entries (timelines included) and the PRs that ended.
test("the dashboard's queue list and board read no entry again while the runner has recorded nothing since", async () => {
  const call = callsOn('dashboard');
  const { id: queueId } = await call('/v1/createQueue', {});
  await call('/v1/updateQueue', { state: 'PAUSED' });
  for (const n of [1, 2, 3]) await call('/v1/submitPullRequest', { pr: { number: n } });
  await call('/v1/cancelPullRequest', { pr: { number: 2 } });
  await h.app.queueRunner.settled(queueId);
  const entryQueries = async (path: string, body: object) => {
    counting = new Map();
    const res = await h.post(path, body, token);
    const entries = counting.get('queue_entries') ?? 0;
    counting = null;
    expect(res.statusCode).toBe(200);
    return { entries, body: res.json() };
  };
  const list = () => entryQueries('/v1/listQueues', {});
  const board = () => entryQueries('/v1/getQueueBoard', { repo: { host: 'sandbox', owner: 'demo', name: 'dashboard' }, targetBranch: 'main' });
  await list();
  await board();
  const [listed, shown] = [await list(), await board()];
  expect(listed.entries).toBe(0);
  expect(shown.entries).toBe(0);
  expect(shown.body.recentlyEnded.map((e: { pullRequest: { prNumber: number } }) => e.pullRequest.prNumber)).toEqual([2]);
  // A decision recorded since: read again, and shown.
  await call('/v1/cancelPullRequest', { pr: { number: 3 } });
  await h.app.queueRunner.settled(queueId);
  const after = await board();
  expect(after.entries).toBeGreaterThan(0);
  expect(after.body.recentlyEnded.map((e: { pullRequest: { prNumber: number } }) => e.pullRequest.prNumber).sort()).toEqual([2, 3]);
});
