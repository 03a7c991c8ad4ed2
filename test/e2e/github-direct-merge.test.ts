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

test('up to date, own checks passed, nothing ahead: lands without a test branch or a CI run, squashed, content as its head', async () => {
  const { repo, ref, testBranchPushes } = await queueFor();
  const n = greenPullRequest(repo, 'Already green');
  repo.addLabel(n, 'merge-queue');
  await h.fake.waitFor(async () => (await stateOf(ref, n)) === 'MERGED', { message: 'the PR merged directly' });
  expect(testBranchPushes).toEqual([]);
  const run = await details(ref, n);
  expect(run).toMatchObject({ status: 'succeeded', requiredStatuses: ['ci'] });
  expect(run.landedWithoutCi).toMatch(/up to date with main .* own required checks \(ci\) had passed/);
  // The squash commit on main holds exactly the PR head's content (what its own CI tested), with one parent.
  const main = repo.branch('main') as string;
  expect(h.fake.sameContent(main, repo.pullRequest(n).headSha)).toBe(true);
  expect(h.fake.state.getCommit(main).parents).toHaveLength(1);
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

test('GitHub refuses the direct merge: the PR leaves the queue with GitHub\'s reason, once; "Base branch was modified" only rebuilds', async () => {
  const { repo, ref } = await queueFor();
  // A transient refusal first: the queue looks again and lands it.
  h.fake.failNext({ operationId: 'pulls/merge', status: 405, message: 'Base branch was modified. Review and try the merge again.' });
  const n = greenPullRequest(repo, 'Lands on the second try');
  repo.addLabel(n, 'merge-queue');
  await h.fake.waitFor(async () => (await stateOf(ref, n)) === 'MERGED', { message: 'merged after the transient refusal' });
  expect(h.fake.requestsTo('pulls/merge').filter((r) => r.path === `/repos/acme/${ref.name}/pulls/${n}/merge`)).toHaveLength(2);

  // A refusal for good: ejected with GitHub's words, and never tried again.
  h.fake.failNext({ operationId: 'pulls/merge', status: 405, message: 'At least 1 approving review is required by reviewers with write access.' });
  const m = greenPullRequest(repo, 'Not approved');
  repo.addLabel(m, 'merge-queue');
  await h.fake.waitFor(async () => (await stateOf(ref, m)) === 'FAILED', { message: 'ejected' });
  const failed = (await h.api('/v1/getSubmittedPullRequest', { repo: ref, targetBranch: 'main', pr: { number: m }, includeTimeline: true })).json();
  expect(failed.timeline).toEqual(expect.arrayContaining([expect.objectContaining({ reason: 'merge_refused' })]));
  expect(JSON.stringify(failed.timeline)).toMatch(/approving review is required/);
  await new Promise((r) => setTimeout(r, 500));
  expect(h.fake.requestsTo('pulls/merge').filter((r) => r.path === `/repos/acme/${ref.name}/pulls/${m}/merge`)).toHaveLength(1);
});
