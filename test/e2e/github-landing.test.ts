/**
 * Landing on GitHub as GitHub really behaves (issue 9): webhooks delivered
 * concurrently and out of order, protection that refuses direct pushes, the
 * "up to date" rule, missed push deliveries. Each scenario failed on the
 * merge-by-PR-API code (refusal loops, stale bases, runs thrown away by our own
 * merge's push) and must converge here.
 */
import type { FakeEvent } from '../support/fake-github/index.js';
import { problemsOnceAny, startGitHubHarness, type GitHubHarness } from '../support/github-harness.js';

let h: GitHubHarness;
beforeAll(async () => {
  // GitHub's manners: every delivery on its own, up to 150 ms late, overlapping the others.
  h = await startGitHubHarness({ concurrentWebhooks: { maxDelayMs: 150, seed: 9 } });
}, 60_000);
afterAll(() => h.close(), 30_000);
afterEach(() => {
  h.fake.ci.stop();
  expect(h.fake.violations).toEqual([]);
});

type Repo = ReturnType<GitHubHarness['fake']['createRepo']>;
let counter = 0;

async function queueFor(protect: (repo: Repo) => void, config: Record<string, unknown> = {}) {
  const name = `landing${++counter}`;
  const repo = h.fake.createRepo(`acme/${name}`);
  protect(repo);
  const ref = { host: 'github.com', owner: 'acme', name };
  expect((await h.api('/v1/createQueue', { repo: ref, targetBranch: 'main' })).status).toBe(200);
  expect((await h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', mergeMethod: 'merge_commit', ...config })).status).toBe(200);
  return { repo, ref, name };
}

function greenPullRequest(repo: Repo, title: string): number {
  const n = repo.openPullRequest({ title });
  h.fake.ci.complete(repo.pullRequest(n).headSha, 'ci');
  return n;
}

/**
 * Completes the `ci` check the fake CI started on a test branch: waits for it to have
 * started first (a completion before the start would be overtaken by it, which no real
 * CI does).
 */
async function finishCi(repo: Repo, branchRef: string): Promise<void> {
  const sha = repo.branch(branchRef.replace('refs/heads/', '')) as string;
  await h.fake.waitFor(() => h.fake.checkRuns(sha, 'ci').some((r) => r.status === 'in_progress'), { message: `CI to start on ${branchRef}` });
  h.fake.ci.complete(sha, 'ci');
}

/** Pushes to the queue's test branches (each one is a CI trigger) and the test runs the queue made. */
function watchTestBranches(repoName: string) {
  const pushes: string[] = [];
  const stop = h.fake.state.onEvent((e: FakeEvent) => {
    if (e.name === 'push' && e.repo === `acme/${repoName}` && !e.deleted && e.ref.startsWith('refs/heads/mq/')) pushes.push(e.ref);
  });
  return { pushes, stop };
}

async function prView(ref: object, number: number): Promise<Record<string, unknown>> {
  const res = await h.api('/v1/getSubmittedPullRequest', { repo: ref, targetBranch: 'main', pr: { number }, includeTimeline: true });
  return res.status === 200 ? res.json() : {};
}

async function waitForState(ref: object, number: number, state: string, timeoutMs = 20_000) {
  let last: Record<string, unknown> = {};
  await h.fake.waitFor(
    async () => {
      last = await prView(ref, number);
      return last.state === state;
    },
    { timeoutMs, message: `PR #${number} to be ${state}` },
  ).catch(async (error: Error) => {
    // Say where it stood, and where the engine stood: a wait that times out should explain itself.
    const seen = JSON.stringify({ state: last.state, notReadyReason: last.notReadyReason, waitingReason: last.waitingReason, timeline: last.timeline });
    throw new Error(`${error.message} (last seen: ${seen}; engine: ${await h.describeQueue(ref as { owner: string; name: string })})`);
  });
  return last;
}

test('"up to date" rule, a chain of three: each lands by fast-forward on the one before, nothing is rebuilt, one CI trigger per run', async () => {
  // One PR a run (fixed tuning, no batches): adaptive tuning batches PRs that wait together, and whether two labels
  // land in one decision depends on the machine's speed (a slow CI machine once tested #2 and #3 in one run).
  const { repo, ref, name } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'], strict: true }), { concurrency: 3, tuning: 'fixed', batch: false });
  const watch = watchTestBranches(name);
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'], delayMs: 50 });
  try {
    const numbers = [1, 2, 3].map((i) => greenPullRequest(repo, `Chain ${i}`));
    for (const n of numbers) repo.addLabel(n, 'merge-queue');
    for (const n of numbers) await waitForState(ref, n, 'MERGED');
    expect(numbers.map((n) => repo.pullRequest(n).merged)).toEqual([true, true, true]);
    // Three runs, each pushed once: the merge of #1 (and its push webhook, however late) threw nothing away.
    expect(watch.pushes).toHaveLength(3);
    expect(new Set(watch.pushes).size).toBe(3);
    // Each run was built on the one ahead of it, so the branch is exactly the last tested commit, holding all three.
    const tested = await Promise.all(numbers.map(async (number) => (await h.api('/v1/getMergeQueueTestingDetails', { repo: ref, targetBranch: 'main', pr: { number } })).json().testBranchSha));
    expect(tested).toContain(repo.branch('main'));
    expect(h.fake.pullRequestsIn(repo.branch('main') as string).sort()).toEqual(numbers);
  } finally {
    watch.stop();
  }
});

test('squash: the branch gets one single-parent commit per PR with exactly the tested tree; GitHub cannot mark them merged, so they are closed with a note', async () => {
  const { repo, ref } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'], strict: true }), { mergeMethod: 'squash', batch: true, batchingMinSize: 2, batchingMaxWaitTimeMinutes: 10 });
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  const before = repo.branch('main') as string;
  const numbers = [1, 2].map((i) => greenPullRequest(repo, `Squash ${i}`));
  for (const n of numbers) repo.addLabel(n, 'merge-queue');
  for (const n of numbers) await waitForState(ref, n, 'MERGED');
  const tested = (await h.api('/v1/getMergeQueueTestingDetails', { repo: ref, targetBranch: 'main', pr: { number: 2 } })).json();
  const main = repo.branch('main') as string;
  expect(main).toBe(tested.testBranchSha);
  // Linear: two squashed commits on the old head.
  const second = h.fake.parentsOf(main);
  expect(second).toHaveLength(1);
  expect(h.fake.parentsOf(second[0] as string)).toEqual([before]);
  // In the order they were queued (the label webhooks raced): one squashed commit each.
  expect([h.fake.messageOf(main), h.fake.messageOf(second[0] as string)].map((m) => m.split('\n')[0]).sort()).toEqual(['Squash 1 (#1)', 'Squash 2 (#2)']);
  for (const n of numbers) {
    await h.fake.waitFor(() => repo.pullRequest(n).state === 'closed', { message: `#${n} to be closed` });
    expect(repo.comments(n).some((c) => c.body.includes(main) && /squashed/.test(c.body))).toBe(true);
  }
});

test('"Require a pull request" turned on while a run tests, without a bypass for the App: landing is blocked with the fix, nothing loops, and it lands untested again once allowed', async () => {
  const { repo, ref, name } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'] }));
  const watch = watchTestBranches(name);
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'], conclusion: () => null });
  try {
    const n = greenPullRequest(repo, 'Needs a bypass');
    repo.addLabel(n, 'merge-queue');
    await h.fake.waitFor(() => watch.pushes.length === 1, { message: 'the test branch' });
    // Protection changes under the run (the check before testing could not see it coming).
    repo.protectBranch('main', { requiredChecks: ['ci'], requiredApprovals: 0 });
    // Reported at once, maybe before the queue has recorded its test commit: it looks again shortly.
    await finishCi(repo, watch.pushes[0]!);
    const problems = await problemsOnceAny(h, ref);
    expect(problems).toEqual([expect.objectContaining({ kind: 'landing_blocked', message: expect.stringMatching(/Changes must be made through a pull request[\s\S]*bypass/) })]);
    // No loop: the PR keeps its passed run and its place; nothing is rebuilt or retested while blocked.
    await new Promise((r) => setTimeout(r, 1_500));
    const view = await prView(ref, n);
    expect(view.state).toBe('TESTS_PASSED');
    expect(view.waitingReason).toMatch(/stopped landing/);
    expect(watch.pushes).toHaveLength(1);
    expect(repo.pullRequest(n).merged).toBe(false);
    // The operator adds the App to the bypass list and resumes the queue: it lands what it tested.
    repo.protectBranch('main', { requiredChecks: ['ci'], requiredApprovals: 0, bypassPullRequests: [h.fake.app.botLogin] });
    expect((await h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', state: 'RUNNING' })).status).toBe(200);
    await waitForState(ref, n, 'MERGED');
    expect(repo.pullRequest(n).merged).toBe(true);
    expect(watch.pushes).toHaveLength(1);
    expect((await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).json().problems).toEqual([]);
  } finally {
    watch.stop();
  }
});

test('a landing GitHub would refuse is predicted before any CI is spent (squash turned off; then push restrictions without the App), and the queue moves once the operator fixes it', async () => {
  const { repo, ref, name } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'], pushAllowances: [] }), { mergeMethod: 'squash' });
  repo.allowMergeMethods({ squash: false });
  const watch = watchTestBranches(name);
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  const problem = async (pattern: RegExp) => {
    let problems: Array<{ kind: string; message: string }> = [];
    await h.fake.waitFor(
      async () => {
        problems = (await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).json().problems as typeof problems;
        return problems.some((p) => p.kind === 'landing_blocked' && pattern.test(p.message));
      },
      { timeoutMs: 20_000, message: `a landing_blocked problem matching ${pattern}` },
    ).catch(async (error: Error) => {
      throw new Error(`${error.message} (last: ${JSON.stringify(problems)}; engine: ${await h.describeQueue(ref)})`);
    });
  };
  try {
    const n = greenPullRequest(repo, 'Predicted');
    repo.addLabel(n, 'merge-queue');
    await problem(/does not allow squash merges/);
    expect((await prView(ref, n)).state).toBe('PENDING');
    // The operator picks a method the repository allows; the next obstacle is named, still before CI.
    expect((await h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', mergeMethod: 'merge_commit' })).status).toBe(200);
    await problem(/is not listed/);
    expect(watch.pushes).toHaveLength(0);
    repo.protectBranch('main', { requiredChecks: ['ci'], pushAllowances: [h.fake.app.botLogin] });
    expect((await h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', state: 'RUNNING' })).status).toBe(200);
    await waitForState(ref, n, 'MERGED');
    expect(watch.pushes).toHaveLength(1);
  } finally {
    watch.stop();
  }
});

test('a push to the branch whose webhook GitHub never delivers: the landing finds the branch moved, the head is read, the run rebuilt once, and it lands', async () => {
  const { repo, ref, name } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'] }));
  const watch = watchTestBranches(name);
  let hold = true;
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'], conclusion: () => (hold ? null : 'success') });
  try {
    const n = greenPullRequest(repo, 'Behind a silent push');
    repo.addLabel(n, 'merge-queue');
    await waitForState(ref, n, 'TESTING');
    await h.fake.waitFor(() => watch.pushes.length === 1, { message: 'the test branch' });
    await h.fake.webhooks.idle();
    // Someone pushes to main; GitHub loses that delivery.
    h.fake.webhooks.pause();
    repo.push('main', { change: 'hotfix' });
    h.fake.webhooks.drop();
    h.fake.webhooks.resume();
    hold = false;
    await finishCi(repo, watch.pushes[0]!);
    await waitForState(ref, n, 'MERGED');
    expect(repo.pullRequest(n).merged).toBe(true);
    expect(h.fake.pullRequestsIn(repo.branch('main') as string)).toContain(n);
    // Exactly one rebuild: the first run on the stale base, the second on the real head.
    expect(watch.pushes).toHaveLength(2);
  } finally {
    watch.stop();
  }
});

test('a PR from a fork: its check events name no pull request, yet the queue finds it by head sha and admits it once its checks pass', async () => {
  const { repo, ref } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'] }));
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  const n = repo.openPullRequest({ title: 'From a fork', fromFork: true });
  repo.addLabel(n, 'merge-queue');
  // Its own CI has not reported: GitHub calls it blocked, and the queue says it waits for its checks.
  await h.fake.waitFor(async () => (await prView(ref, n)).notReadyReason === 'awaiting_checks', { timeoutMs: 20_000, message: 'the fork PR to wait for its checks' });
  h.fake.ci.complete(repo.pullRequest(n).headSha, 'ci');
  await waitForState(ref, n, 'MERGED');
  expect(repo.pullRequest(n).merged).toBe(true);
});

test('GitHub recomputing mergeability after a landing (mergeable: null) does not cost the PR being tested its place or its run', async () => {
  const { repo, ref, name } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'] }), { concurrency: 2 });
  const watch = watchTestBranches(name);
  // CI starts on every test branch; the test finishes each run itself.
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'], conclusion: () => null });
  const finish = (push: string) => finishCi(repo, push);
  try {
    const first = greenPullRequest(repo, 'Lands first');
    const second = greenPullRequest(repo, 'Tested meanwhile');
    repo.addLabel(first, 'merge-queue');
    await waitForState(ref, first, 'TESTING');
    repo.addLabel(second, 'merge-queue');
    await waitForState(ref, second, 'TESTING');
    await h.fake.waitFor(() => watch.pushes.length === 2, { message: 'both test branches' });
    await finish(watch.pushes[0]!);
    await waitForState(ref, first, 'MERGED');
    // #1 landed: GitHub answers mergeable: null for #2 for a while; an approval makes the queue read #2 meanwhile.
    repo.mergeableUnknownFor(second, 3);
    repo.approve(second, 'reviewer');
    await h.fake.webhooks.idle();
    await new Promise((r) => setTimeout(r, 500));
    expect((await prView(ref, second)).state).toBe('TESTING');
    // Its run (built on #1's tested commit) finishes and lands; nothing was rebuilt.
    await finish(watch.pushes[1]!);
    await waitForState(ref, second, 'MERGED');
    expect(watch.pushes).toHaveLength(2);
    expect(repo.pullRequest(second).merged).toBe(true);
  } finally {
    watch.stop();
  }
});

test('a lost push webhook is caught by the periodic read of the branch head: the run is rebuilt on the real head before it is wasted', async () => {
  const { repo, ref, name } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'] }));
  const watch = watchTestBranches(name);
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'], conclusion: () => null });
  try {
    const n = greenPullRequest(repo, 'On a moving base');
    repo.addLabel(n, 'merge-queue');
    await h.fake.waitFor(() => watch.pushes.length === 1, { message: 'the test branch' });
    await h.fake.webhooks.idle();
    h.fake.webhooks.pause();
    const hotfix = repo.push('main', { change: 'hotfix' });
    h.fake.webhooks.drop();
    h.fake.webhooks.resume();
    // The maintenance round (every 5 minutes in service) reads the head; the run is rebuilt on it.
    // (A round may be running in the background: wait for it, then ask for every task now.)
    await h.fake.waitFor(async () => {
      await h.services.maintenance.round({ all: true });
      return watch.pushes.length === 2;
    }, { message: 'a run rebuilt on the real head' });
    const rebuilt = repo.branch(watch.pushes[1]!.replace('refs/heads/', '')) as string;
    expect(h.fake.parentsOf(rebuilt)).toContain(hotfix);
    await finishCi(repo, watch.pushes[1]!);
    await waitForState(ref, n, 'MERGED');
    expect(watch.pushes).toHaveLength(2);
  } finally {
    watch.stop();
  }
});

test('the App suspended on the account: the queue says so and tests nothing; the suspension lifted, it goes on by itself', async () => {
  const { repo, ref, name } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'] }));
  const watch = watchTestBranches(name);
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  const installation = (action: string) =>
    h.fake.webhooks.send('installation', action, { installation: { id: 1, account: { login: 'acme' } } }, { repo: `acme/${name}` });
  const problems = async () => (await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).json().problems as unknown[];
  try {
    h.fake.suspendApp('acme', true);
    expect((await installation('suspend')).status).toBeLessThan(300);
    await h.fake.waitFor(async () => (await problems()).length > 0, { message: 'a problem' });
    expect(await problems()).toEqual([expect.objectContaining({ kind: 'host_unavailable', message: expect.stringMatching(/suspended on acme/) })]);
    // GitHub delivers no webhook to a suspended App: the PR comes through the API.
    const n = greenPullRequest(repo, 'Waits for the App');
    expect((await h.api('/v1/submitPullRequest', { repo: ref, targetBranch: 'main', pr: { number: n } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(watch.pushes).toHaveLength(0);
    h.fake.suspendApp('acme', false);
    expect((await installation('unsuspend')).status).toBeLessThan(300);
    await waitForState(ref, n, 'MERGED');
    expect(await problems()).toEqual([]);
  } finally {
    h.fake.suspendApp('acme', false);
    watch.stop();
  }
});

test('a suspension lifted, its deliveries handled out of order (unsuspend, then suspend): the queue goes on, as GitHub says the App runs', async () => {
  const { repo, ref, name } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'] }));
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  const installation = (action: string) =>
    h.fake.webhooks.send('installation', action, { installation: { id: 1, account: { login: 'acme' } } }, { repo: `acme/${name}` });
  const problems = async () => (await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).json().problems as Array<{ kind: string }>;
  h.fake.suspendApp('acme', true);
  h.fake.suspendApp('acme', false);
  expect((await installation('unsuspend')).status).toBeLessThan(300);
  expect((await installation('suspend')).status).toBeLessThan(300);
  // Both handled (the suspend last): the queue asked GitHub each time, and GitHub says the App runs.
  await h.fake.waitFor(async () => h.fake.requestsTo('apps/get-repo-installation').length >= 2, { message: 'both deliveries handled' });
  await new Promise((r) => setTimeout(r, 300));
  expect(await problems()).toEqual([]);
  const n = greenPullRequest(repo, 'Lands after the suspension ended');
  repo.addLabel(n, 'merge-queue');
  await waitForState(ref, n, 'MERGED');
  // Suspended for real: the queue says so.
  h.fake.suspendApp('acme', true);
  expect((await installation('suspend')).status).toBeLessThan(300);
  await h.fake.waitFor(async () => (await problems()).length > 0, { message: 'a problem' });
  expect((await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).json().problems).toEqual([expect.objectContaining({ kind: 'host_unavailable', message: expect.stringMatching(/suspended on acme/) })]);
  h.fake.suspendApp('acme', false);
  expect((await installation('unsuspend')).status).toBeLessThan(300);
  await h.fake.waitFor(async () => (await problems()).length === 0, { message: 'the problem gone' });
});

test('rebase: each PR commit is replayed onto the branch with its message, the branch is the tested commit, linear', async () => {
  const { repo, ref } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'], requiredLinearHistory: true }), { mergeMethod: 'rebase' });
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  const before = repo.branch('main') as string;
  const n = repo.openPullRequest({ title: 'Two commits', commits: 2 });
  h.fake.ci.complete(repo.pullRequest(n).headSha, 'ci');
  repo.addLabel(n, 'merge-queue');
  await waitForState(ref, n, 'MERGED');
  const tested = (await h.api('/v1/getMergeQueueTestingDetails', { repo: ref, targetBranch: 'main', pr: { number: n } })).json();
  const main = repo.branch('main') as string;
  expect(main).toBe(tested.testBranchSha);
  const first = h.fake.parentsOf(main);
  expect(first).toHaveLength(1);
  expect(h.fake.parentsOf(first[0] as string)).toEqual([before]);
  expect([h.fake.messageOf(first[0] as string), h.fake.messageOf(main)]).toEqual([`PR #${n} change 1`, `PR #${n} change 2`]);
  await h.fake.waitFor(() => repo.pullRequest(n).state === 'closed', { message: 'the PR closed with a note' });
});

test("the queue's own check required by protection (which would deadlock it): said before any CI, and nothing is tested", async () => {
  const { repo, ref, name } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci', 'Merge Queue (main)'] }));
  const watch = watchTestBranches(name);
  try {
    const n = greenPullRequest(repo, 'Deadlock avoided');
    // Its own check run is what protection asks for on the PR: shown, so GitHub calls the PR mergeable.
    h.fake.ci.complete(repo.pullRequest(n).headSha, 'Merge Queue (main)');
    repo.addLabel(n, 'merge-queue');
    await h.fake.waitFor(
      async () => ((await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).json().problems as Array<{ message: string }>).some((p) => /requires the queue's own check/.test(p.message)),
      { timeoutMs: 20_000, message: "a problem naming the queue's own check" },
    );
    expect(watch.pushes).toHaveLength(0);
    // It waits in the queue, neither tested nor failed: PENDING, or NOT_READY when the runner read the PR
    // again after the queue's own check run on it went back in progress (GitHub then calls it blocked by
    // that required check: the very deadlock the problem names). Which one depends on webhook timing.
    expect(['PENDING', 'NOT_READY']).toContain((await prView(ref, n)).state);
    expect(watch.pushes).toHaveLength(0);
  } finally {
    watch.stop();
  }
});

test('GitHub refusing the App while a run starts (403, a missing permission) stops the queue with the reason; no PR fails for it', async () => {
  const { repo, ref } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'] }));
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  h.fake.failNext({ operationId: 'repos/merge', status: 403, message: 'Resource not accessible by integration' });
  const n = greenPullRequest(repo, 'Blocked by a permission');
  repo.addLabel(n, 'merge-queue');
  await h.fake.waitFor(
    async () => ((await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).json().problems as Array<{ message: string }>).some((p) => /Resource not accessible by integration[\s\S]*permissions/.test(p.message)),
    { timeoutMs: 20_000, message: 'a problem naming the refusal' },
  );
  expect((await prView(ref, n)).state).toBe('PENDING');
  // The permission is granted; the operator resumes the queue.
  expect((await h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', state: 'RUNNING' })).status).toBe(200);
  await waitForState(ref, n, 'MERGED');
});

test('secondary rate limits and a 502 while building and landing: the queue waits as GitHub asks and the PR merges; nothing fails', async () => {
  const { repo, ref } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'] }));
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  const limited = { status: 403, message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', headers: { 'retry-after': '1' } };
  h.fake.failNext({ operationId: 'repos/merge', ...limited });
  h.fake.failNext({ operationId: 'git/create-ref', ...limited });
  h.fake.failNext({ operationId: 'git/update-ref', status: 502, message: 'Bad Gateway' });
  const n = greenPullRequest(repo, 'Rate limited');
  repo.addLabel(n, 'merge-queue');
  const merged = await waitForState(ref, n, 'MERGED');
  expect(repo.pullRequest(n).merged).toBe(true);
  expect((merged.timeline as Array<{ state: string }>).map((e) => e.state)).not.toContain('FAILED');
  expect(h.fake.failures.filter((f) => (f.times ?? 0) > 0)).toEqual([]);
});

test('rebase: a PR GitHub calls not rebaseable waits NOT_READY (not_rebaseable) before any CI; once it is, it lands', async () => {
  const { repo, ref, name } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'] }), { mergeMethod: 'rebase' });
  const watch = watchTestBranches(name);
  h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  try {
    const n = greenPullRequest(repo, 'Rebase would conflict');
    repo.setRebaseable(n, false);
    repo.addLabel(n, 'merge-queue');
    await h.fake.waitFor(async () => (await prView(ref, n)).notReadyReason === 'not_rebaseable', { timeoutMs: 20_000, message: 'not_rebaseable' });
    expect(watch.pushes).toHaveLength(0);
    // The author rebases it by hand: GitHub now says it rebases cleanly (and a push event makes the queue read it).
    repo.setRebaseable(n, undefined);
    repo.approve(n, 'reviewer');
    await waitForState(ref, n, 'MERGED');
  } finally {
    watch.stop();
  }
});

describe('the branch reset by hand to a head the queue landed (a rollback by force-push; found by review: the next landing brought the rolled-back PR back)', () => {
  /**
   * #1 and #2 land one after the other; then an operator resets main to #1's landing, and #3 is queued and lands.
   * Returns the PRs, the reset head and the pushes to the queue's test branches (the watch stops here, whatever happens).
   */
  async function rolledBack(loseTheWebhook: boolean) {
    const { repo, ref, name } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'] }), { tuning: 'fixed', batch: false });
    const watch = watchTestBranches(name);
    h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'], delayMs: 50 });
    try {
      const kept = greenPullRequest(repo, 'Kept');
      repo.addLabel(kept, 'merge-queue');
      await waitForState(ref, kept, 'MERGED');
      const keptHead = repo.branch('main') as string;
      const undone = greenPullRequest(repo, 'Rolled back');
      repo.addLabel(undone, 'merge-queue');
      await waitForState(ref, undone, 'MERGED');
      await h.fake.webhooks.idle();
      if (loseTheWebhook) h.fake.webhooks.pause();
      repo.resetBranch('main', keptHead);
      if (loseTheWebhook) {
        h.fake.webhooks.drop();
        h.fake.webhooks.resume();
      }
      await h.fake.webhooks.idle();
      const next = greenPullRequest(repo, 'After the rollback');
      repo.addLabel(next, 'merge-queue');
      await waitForState(ref, next, 'MERGED');
      return { repo, pushes: watch.pushes, kept, undone, next, keptHead };
    } finally {
      watch.stop();
    }
  }

  test('its push delivered: the next PR is tested on the reset head and lands there; the rolled-back PR stays off the branch', async () => {
    const { repo, pushes, kept, next, keptHead } = await rolledBack(false);
    expect(h.fake.pullRequestsIn(repo.branch('main') as string).sort()).toEqual([kept, next]);
    expect(h.fake.parentsOf(repo.branch('main') as string)).toContain(keptHead);
    // One run each: the forced push made the queue read the head and believe it before it built anything.
    expect(pushes).toHaveLength(3);
  });

  test('its push never delivered: the landing finds the branch elsewhere than expected, the run is built again on the reset head, and the rolled-back PR stays off', async () => {
    const { repo, pushes, kept, undone, next } = await rolledBack(true);
    expect(h.fake.pullRequestsIn(repo.branch('main') as string).sort()).toEqual([kept, next]);
    expect(h.fake.pullRequestsIn(repo.branch('main') as string)).not.toContain(undone);
    // The first run of the next PR was built on the head the queue knew; the refusal to land it made the second.
    expect(pushes).toHaveLength(4);
  });
});

test("a label added and removed, the label's delivery late and the removal's lost: the late label submits the PR, its facts (read without the label) take it out, nothing is tested", async () => {
  const { repo, ref, name } = await queueFor((r) => r.protectBranch('main', { requiredChecks: ['ci'] }));
  const watch = watchTestBranches(name);
  try {
    const n = greenPullRequest(repo, 'Labelled by mistake');
    await h.fake.webhooks.idle();
    h.fake.webhooks.pause();
    repo.addLabel(n, 'merge-queue');
    repo.removeLabel(n, 'merge-queue');
    const held = h.fake.webhooks.drop();
    h.fake.webhooks.resume();
    // Only the label's delivery arrives, after the label is gone (GitHub retried it; the removal's was lost).
    await h.fake.webhooks.sendBuilt(held.find((e) => e.event === 'pull_request' && e.action === 'labeled')!);
    const view = await waitForState(ref, n, 'CANCELLED');
    expect(view.timeline).toContainEqual(expect.objectContaining({ state: 'CANCELLED', reason: 'user_requested', detail: 'the merge-queue label is no longer on the pull request' }));
    expect(watch.pushes).toEqual([]);
  } finally {
    watch.stop();
  }
});
