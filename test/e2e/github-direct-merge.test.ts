/**
 * Direct merge on the fake GitHub (directMergeMode: always): a PR up to date with
 * the branch, its own required checks passed, nothing ahead of it, lands without
 * a second CI run; when any of the three does not hold it goes through the queue.
 */
import type { FakeEvent } from '../support/fake-github/index.js';
import { startGitHubHarness, type GitHubHarness } from '../support/github-harness.js';

let h: GitHubHarness;
beforeAll(async () => {
  h = await startGitHubHarness({ concurrentWebhooks: { maxDelayMs: 100, seed: 4 } });
}, 60_000);
afterAll(() => h.close(), 30_000);
afterEach(() => {
  h.fake.ci.stop();
  expect(h.fake.violations).toEqual([]);
});

type Repo = ReturnType<GitHubHarness['fake']['createRepo']>;
let counter = 0;

async function queueFor(config: Record<string, unknown> = {}) {
  const name = `direct${++counter}`;
  const repo = h.fake.createRepo(`acme/${name}`);
  repo.protectBranch('main', { requiredChecks: ['ci'] });
  const ref = { host: 'github.com', owner: 'acme', name };
  expect((await h.api('/v1/createQueue', { repo: ref, targetBranch: 'main' })).status).toBe(200);
  expect((await h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', mergeMethod: 'squash', directMergeMode: 'always', ...config })).status).toBe(200);
  // Every push to a test branch is a CI run of the user's.
  const testBranchPushes: string[] = [];
  h.fake.state.onEvent((e: FakeEvent) => {
    if (e.name === 'push' && e.repo === `acme/${name}` && !e.deleted && e.ref.startsWith('refs/heads/mq/')) testBranchPushes.push(e.ref);
  });
  return { repo, ref, testBranchPushes };
}

function greenPullRequest(repo: Repo, title: string): number {
  const n = repo.openPullRequest({ title });
  h.fake.ci.complete(repo.pullRequest(n).headSha, 'ci');
  return n;
}

async function stateOf(ref: object, n: number): Promise<string | undefined> {
  const res = await h.api('/v1/getSubmittedPullRequest', { repo: ref, targetBranch: 'main', pr: { number: n } });
  return res.status === 200 ? (res.json().state as string) : undefined;
}

const details = async (ref: object, n: number) => (await h.api('/v1/getMergeQueueTestingDetails', { repo: ref, targetBranch: 'main', pr: { number: n } })).json();

test('up to date, own checks passed, nothing ahead: lands without a test branch or a CI run, by fast-forward to its head', async () => {
  const { repo, ref, testBranchPushes } = await queueFor();
  const n = greenPullRequest(repo, 'Already green');
  repo.addLabel(n, 'merge-queue');
  await h.fake.waitFor(async () => (await stateOf(ref, n)) === 'MERGED', { message: 'the PR merged directly' });
  expect(testBranchPushes).toEqual([]);
  const run = await details(ref, n);
  expect(run).toMatchObject({ status: 'succeeded', requiredStatuses: ['ci'] });
  expect(run.landedWithoutCi).toMatch(/up to date with main .* own required checks \(ci\) had passed/);
  // main is the PR's head itself, the commit its own CI tested (a squash would be a commit no CI saw); GitHub calls it merged.
  expect(repo.branch('main')).toBe(repo.pullRequest(n).headSha);
  expect(repo.pullRequest(n).merged).toBe(true);
});

test('the PR behind a direct merge is built on its head, so its tested commit still fast-forwards once that lands', async () => {
  const { repo, ref, testBranchPushes } = await queueFor();
  const first = greenPullRequest(repo, 'Direct');
  const second = greenPullRequest(repo, 'Behind it');
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  repo.addLabel(first, 'merge-queue');
  // Label webhooks arrive in any order (up to 100 ms late each): the second is labelled once the first
  // is in the queue, so it lines up behind the first while that one's direct merge is still in flight.
  await h.fake.waitFor(async () => (await stateOf(ref, first)) !== undefined, { message: 'the first PR submitted' });
  repo.addLabel(second, 'merge-queue');
  await h.fake.waitFor(async () => (await stateOf(ref, second)) === 'MERGED', { timeoutMs: 20_000, message: 'both merged' });
  expect(await stateOf(ref, first)).toBe('MERGED');
  expect((await details(ref, first)).landedWithoutCi).toBeDefined();
  // One CI run in all: the second PR's, never rebuilt.
  expect(testBranchPushes).toHaveLength(1);
  expect(h.fake.state.getCommit(repo.branch('main') as string).parents).toContain(repo.pullRequest(first).headSha);
});

test('behind the branch: tested on a test branch like any PR', async () => {
  const { repo, ref, testBranchPushes } = await queueFor();
  const n = greenPullRequest(repo, 'Behind');
  repo.push('main', { change: 'someone else' });
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  repo.addLabel(n, 'merge-queue');
  await h.fake.waitFor(async () => (await stateOf(ref, n)) === 'MERGED', { timeoutMs: 20_000, message: 'the PR merged after a test run' });
  expect(testBranchPushes).toHaveLength(1);
  expect((await details(ref, n)).landedWithoutCi).toBeUndefined();
});

test('its own checks do not cover what the queue requires: tested like any PR', async () => {
  // Protection asks for `ci` (so GitHub calls the PR mergeable); the queue also wants `e2e`, which never ran on the PR.
  const { repo, ref, testBranchPushes } = await queueFor({ requiredStatuses: ['ci', 'e2e'] });
  const n = greenPullRequest(repo, 'No e2e yet');
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci', 'e2e'] });
  repo.addLabel(n, 'merge-queue');
  await h.fake.waitFor(async () => (await stateOf(ref, n)) === 'MERGED', { timeoutMs: 20_000, message: 'the PR merged after a test run' });
  expect(testBranchPushes).toHaveLength(1);
  expect((await details(ref, n)).landedWithoutCi).toBeUndefined();
});

test('a PR ahead of it: tested on top of that PR, not landed directly', async () => {
  const { repo, ref, testBranchPushes } = await queueFor({ concurrency: 2 });
  const first = greenPullRequest(repo, 'First, behind');
  repo.push('main', { change: 'moved on' });
  const second = greenPullRequest(repo, 'Second, up to date');
  repo.addLabel(first, 'merge-queue');
  await h.fake.waitFor(() => testBranchPushes.length === 1, { message: "the first PR's test branch" });
  repo.addLabel(second, 'merge-queue');
  await h.fake.waitFor(() => testBranchPushes.length === 2, { message: "the second PR's test branch, on top of the first" });
  expect((await details(ref, second)).dependentPrs).toEqual([expect.objectContaining({ prNumber: first })]);
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  for (const branch of repo.branches().filter((b) => b.startsWith('mq/'))) h.fake.ci.complete(repo.branch(branch) as string, 'ci');
  await h.fake.waitFor(async () => (await stateOf(ref, second)) === 'MERGED', { timeoutMs: 20_000, message: 'both merged' });
  expect(await stateOf(ref, first)).toBe('MERGED');
  expect((await details(ref, second)).landedWithoutCi).toBeUndefined();
});

test('directMergeMode off (the default): even a PR that qualifies gets a test run', async () => {
  const { repo, ref, testBranchPushes } = await queueFor({ directMergeMode: 'off' });
  const n = greenPullRequest(repo, 'Green, but the queue tests everything');
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  repo.addLabel(n, 'merge-queue');
  await h.fake.waitFor(async () => (await stateOf(ref, n)) === 'MERGED', { timeoutMs: 20_000, message: 'merged after a test run' });
  expect(testBranchPushes).toHaveLength(1);
});

test('the branch moved between the verdict and the landing: nothing lands, the PR is rebuilt and tested (never landed on content it did not see)', async () => {
  const { repo, ref, testBranchPushes } = await queueFor();
  const n = greenPullRequest(repo, 'Overtaken');
  // The fast-forward is refused once, as GitHub does when the branch moved: the queue reads the branch again.
  h.fake.failNext({ operationId: 'git/update-ref', status: 422, message: 'Update is not a fast forward' });
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  repo.addLabel(n, 'merge-queue');
  await h.fake.waitFor(async () => (await stateOf(ref, n)) === 'MERGED', { timeoutMs: 20_000, message: 'merged in the end' });
  const landings = h.fake.requestsTo('git/update-ref').filter((r) => r.path === `/repos/acme/${ref.name}/git/refs/heads%2Fmain`);
  expect(landings).toHaveLength(2);
  expect(testBranchPushes.length).toBeLessThanOrEqual(1);
});
