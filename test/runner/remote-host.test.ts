/**
 * A remote host (GitHub) is never read inside a request: a submit is answered
 * at once, however slow the host, and the runner reads the PR afterwards.
 */
import type { PullRequestFacts } from '../../src/domain/records.js';
import type { GitHost } from '../../src/ports/git-host.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { waitFor } from '../support/wait-for.js';

const HOST = 'remote.example';
const DELAY_MS = 1_500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the host knows about each PR: facts, or null for "no such PR". */
const prs = new Map<number, PullRequestFacts | null>();
const facts = (overrides: Partial<PullRequestFacts> = {}): PullRequestFacts => ({
  title: 'Slowly read',
  author: 'dev',
  headSha: 'abc',
  baseBranch: 'main',
  open: true,
  draft: false,
  merged: false,
  mergeability: 'mergeable',
  readAt: new Date(0),
  ...overrides,
});

const slowHost: GitHost = {
  async readPullRequest(_repo, prNumber) {
    await sleep(DELAY_MS);
    return prs.get(prNumber) ?? null;
  },
  async readBranchHead() {
    await sleep(DELAY_MS);
    return 'base0';
  },
  startTestRun: async () => ({ ok: true, testBranch: 'mq/x', testBranchSha: null }),
  cancelTestRun: async () => undefined,
  merge: async () => ({ ok: false, reason: 'blocked', message: 'unused' }),
  reportPullRequestStatus: async () => undefined,
};

let h: ApiHarness;
let token: string;
beforeAll(async () => {
  h = await startApiHarness({ prefix: 'remote', sandboxTimeScale: 0.02, hosts: { [HOST]: slowHost } });
  token = await h.tokenFor('acme', HOST);
});
afterAll(() => h.close());

const repo = { host: HOST, owner: 'acme', name: 'app' };
const post = async (path: string, body: object) => (await h.post(path, { repo, targetBranch: 'main', ...body }, token)).json();
const read = (n: number) => post('/v1/getSubmittedPullRequest', { pr: { number: n }, includeTimeline: true });

test('a submit is answered without waiting for the host; the PR is admitted once the runner has read it', async () => {
  await post('/v1/createQueue', {});
  prs.set(1, facts());
  const started = Date.now();
  const answer = await post('/v1/submitPullRequest', { pr: { number: 1 } });
  expect(Date.now() - started).toBeLessThan(DELAY_MS);
  expect(answer).toMatchObject({ state: 'NOT_READY', notReadyReason: 'unknown_to_host' });
  const admitted = await waitFor(() => read(1), (pr) => pr.state !== 'NOT_READY');
  expect(admitted).toMatchObject({ state: expect.stringMatching(/PENDING|TESTING/), prTitle: 'Slowly read' });
});

test('a PR the host says is merged already ends MERGED (merged_outside_queue); one it does not know ends CANCELLED (closed)', async () => {
  prs.set(2, facts({ open: false, merged: true }));
  prs.set(3, null);
  await post('/v1/submitPullRequest', { pr: { number: 2 } });
  await post('/v1/submitPullRequest', { pr: { number: 3 } });
  const merged = await waitFor(() => read(2), (pr) => pr.state !== 'NOT_READY');
  expect(merged.timeline[0]).toMatchObject({ state: 'MERGED', reason: 'merged_outside_queue' });
  const missing = await waitFor(() => read(3), (pr) => pr.state !== 'NOT_READY');
  expect(missing.timeline[0]).toMatchObject({ state: 'CANCELLED', reason: 'closed' });
});

test('a PR ended and pushed to since is submitted again as its new head: the last attempt\'s facts are not taken for a push', async () => {
  prs.set(4, facts({ headSha: 'h4-first' }));
  await post('/v1/submitPullRequest', { pr: { number: 4 } });
  await waitFor(() => read(4), (pr) => pr.state !== 'NOT_READY');
  expect((await post('/v1/cancelPullRequest', { pr: { number: 4 } })).state).toBe('CANCELLED');
  // Its author pushes a fix; the PR is submitted again.
  prs.set(4, facts({ headSha: 'h4-fixed' }));
  await post('/v1/submitPullRequest', { pr: { number: 4 } });
  const again = await waitFor(() => read(4), (pr) => pr.state !== 'NOT_READY');
  expect(again.state).toMatch(/PENDING|TESTING/);
  expect(again.prSha).toBe('h4-fixed');
});
