/**
 * The queue on GitHub, end to end: the service with its GitHub App against a
 * stateful fake GitHub whose every request is validated against GitHub's
 * OpenAPI description (test/support/fake-github). Webhooks are real signed
 * deliveries to the running service.
 */
import { problemsOnceAny, startGitHubHarness, type GitHubHarness } from '../support/github-harness.js';

let h: GitHubHarness;
beforeAll(async () => {
  h = await startGitHubHarness();
}, 60_000);
afterAll(() => h.close(), 30_000);
afterEach(() => {
  expect(h.fake.violations).toEqual([]);
});

let counter = 0;
async function queueFor(options: { requiredChecks?: string[] } = { requiredChecks: ['ci'] }) {
  const name = `widgets${++counter}`;
  const repo = h.fake.createRepo(`acme/${name}`);
  if (options.requiredChecks) repo.protectBranch('main', { requiredChecks: options.requiredChecks });
  // Merge commits: GitHub marks a PR merged when its head lands (squash and rebase are covered in github-landing).
  const created = await h.api('/v1/createQueue', { repo: { host: 'github.com', owner: 'acme', name }, targetBranch: 'main' });
  expect(created.status).toBe(200);
  expect((await h.api('/v1/updateQueue', { repo: { host: 'github.com', owner: 'acme', name }, targetBranch: 'main', mergeMethod: 'merge_commit' })).status).toBe(200);
  return { repo, ref: { host: 'github.com', owner: 'acme', name } };
}

/** A PR whose own CI passed: branch protection requires its checks before GitHub calls it mergeable. */
function greenPullRequest(repo: ReturnType<GitHubHarness['fake']['createRepo']>, options: { title: string; body?: string; base?: string }): number {
  const n = repo.openPullRequest(options);
  h.fake.ci.complete(repo.pullRequest(n).headSha, 'ci');
  return n;
}

/** The PR as the API shows it; `{}` until it has been submitted. */
async function prState(ref: object, number: number): Promise<Record<string, unknown>> {
  const res = await h.api('/v1/getSubmittedPullRequest', { repo: ref, targetBranch: 'main', pr: { number }, includeTimeline: true });
  return res.status === 200 ? res.json() : {};
}

async function waitForState(ref: object, number: number, state: string) {
  let last: Record<string, unknown> = {};
  await h.fake.waitFor(
    async () => {
      last = await prState(ref, number);
      return last.state === state;
    },
    { timeoutMs: 20_000, message: `PR #${number} to be ${state}` },
  ).catch(async (error: Error) => {
    // Say where it stood, and where the engine stood: a wait that times out should explain itself.
    const seen = JSON.stringify({ state: last.state, notReadyReason: last.notReadyReason, waitingReason: last.waitingReason });
    throw new Error(`${error.message} (last seen: ${seen}; engine: ${await h.describeQueue(ref as { owner: string; name: string })})`);
  });
  return last;
}

test('label → test branch → checks pass → merged with the merge-commit-title line', async () => {
  const { repo, ref } = await queueFor();
  const stopCi = h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  try {
    const n = repo.openPullRequest({ title: 'Add widgets', body: 'Adds widgets.\n\nmerge-commit-title: Widgets, at last\n' });
    h.fake.ci.complete(repo.pullRequest(n).headSha, 'ci');
    repo.addLabel(n, 'merge-queue');
    await h.fake.waitFor(() => repo.pullRequest(n).merged, { timeoutMs: 20_000, message: 'the PR to be merged' });
    expect(h.fake.messageOf(repo.branch('main') as string)).toMatch(/^Widgets, at last/);
    await waitForState(ref, n, 'MERGED');
    const details = (await h.api('/v1/getMergeQueueTestingDetails', { repo: ref, targetBranch: 'main', pr: { number: n } })).json();
    expect(details).toMatchObject({ status: 'succeeded', requiredStatuses: ['ci'], requiredStatusesSource: 'branch_protection' });
    // The branch holds exactly what was tested, and the test branch is gone.
    expect(h.fake.sameContent(repo.branch('main') as string, details.testBranchSha as string)).toBe(true);
    await h.fake.waitFor(() => !repo.branches().some((b) => b.startsWith('mq/')), { message: 'the test branch to be deleted' });
    const headSha = repo.pullRequest(n).headSha;
    await h.fake.waitFor(() => h.fake.checkRuns(headSha, 'Merge Queue (main)').at(-1)?.conclusion === 'success', { message: 'the check run to show success' });
  } finally {
    stopCi();
  }
});


test.each([false, true])('a repository renamed on GitHub takes its queue along (its renamed event lost: %s): a label taken off under the new name takes the PR out, and one queued before lands', async (silent) => {
  const { repo, ref } = await queueFor();
  const n = greenPullRequest(repo, { title: 'Queued before the rename' });
  const m = greenPullRequest(repo, { title: 'Taken out after it' });
  repo.addLabel(n, 'merge-queue');
  repo.addLabel(m, 'merge-queue');
  await waitForState(ref, n, 'TESTING');
  await waitForState(ref, m, 'PENDING');
  // Lost: an App registered before it asked for repository events; the queue learnt GitHub's id of the repository
  // from the label events before, and follows it when the next webhook names it anew.
  const renamed = h.fake.renameRepo(`acme/${ref.name}`, `${ref.name}-v2`, { silent });
  const moved = { ...ref, name: `${ref.name}-v2` };
  if (!silent) {
    await h.fake.waitFor(async () => (await h.api('/v1/getQueue', { repo: moved, targetBranch: 'main' })).status === 200, { message: 'the queue to follow the new name' });
    expect((await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).status).toBe(404);
  }
  // Webhooks name the repository by its new name now (found by review: they found no queue, so this changed nothing).
  renamed.removeLabel(m, 'merge-queue');
  await waitForState(moved, m, 'CANCELLED');
  const stopCi = h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  try {
    for (const branch of renamed.branches().filter((b) => b.startsWith('mq/'))) h.fake.ci.complete(renamed.branch(branch) as string, 'ci');
    await h.fake.waitFor(() => renamed.pullRequest(n).merged, { timeoutMs: 20_000, message: 'the PR queued before the rename to be merged' });
    await waitForState(moved, n, 'MERGED');
    expect((await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).status).toBe(404);
    // An old event handled late (a failed delivery retried, or redelivered days later) names the old name: GitHub
    // says where the repository is now, and the queue stays there (found by review: it moved back).
    const old = h.fake.webhooks.deliveries.find((d) => d.event === 'pull_request' && d.action === 'labeled' && (d.payload.repository as { name?: string }).name === ref.name);
    expect(old).toBeDefined();
    // Every move from here is recorded: a move back would heal at the next webhook naming the new name.
    const moves: string[] = [];
    const move = h.stores.queues.moveToRepository.bind(h.stores.queues);
    h.stores.queues.moveToRepository = (id, to, at) => (moves.push(to.name), move(id, to, at));
    const lateId = `late-${String(silent)}`;
    await h.fake.webhooks.sendBuilt({ event: old!.event, action: old!.action, payload: old!.payload }, { deliveryId: lateId });
    await h.fake.webhooks.idle();
    // Handled (recorded, then handled in the background): no longer among the deliveries not handled.
    await h.fake.waitFor(async () => !(await h.stores.deliveries.unhandled(new Date(Date.now() + 60_000), 10, 1_000)).some((d) => d.id === lateId), { message: 'the late delivery handled' });
    h.stores.queues.moveToRepository = move;
    expect(moves).toEqual([]);
    expect((await h.api('/v1/getQueue', { repo: moved, targetBranch: 'main' })).status).toBe(200);
    expect((await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).status).toBe(404);
  } finally {
    stopCi();
  }
});
test('checks fail → FAILED, ejected with a comment naming the failing check; the check run shows the failure', async () => {
  const { repo, ref } = await queueFor();
  const stopCi = h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'], conclusion: () => 'failure' });
  try {
    const n = greenPullRequest(repo, { title: 'Breaks things' });
    repo.addLabel(n, 'merge-queue');
    const failed = await waitForState(ref, n, 'FAILED');
    expect((failed.timeline as Array<{ reason: string }>)[0]?.reason).toBe('failed_tests');
    expect(repo.pullRequest(n).merged).toBe(false);
    await h.fake.waitFor(() => repo.comments(n).some((c) => /ci/.test(c.body) && /fail/i.test(c.body)), { message: 'an ejection comment' });
    const headSha = repo.pullRequest(n).headSha;
    await h.fake.waitFor(() => h.fake.checkRuns(headSha, 'Merge Queue (main)').at(-1)?.conclusion === 'failure', { message: 'the check run to show failure' });
  } finally {
    stopCi();
  }
});

test("a required check of the PR run again while it is tested: GitHub blocks it meanwhile, and it keeps its place and lands", async () => {
  const { repo, ref } = await queueFor();
  const n = greenPullRequest(repo, { title: 'Flaky check re-run' });
  repo.addLabel(n, 'merge-queue');
  await waitForState(ref, n, 'TESTING');
  // The author re-runs the PR's own `ci`: GitHub answers `blocked` until it reports. Its creation in progress is not
  // news to the queue; another check of the PR completing meanwhile is, and the PR is read while `ci` runs.
  h.fake.ci.start(repo.pullRequest(n).headSha, 'ci');
  expect(repo.pullRequest(n)).toMatchObject({ mergeable: true, mergeableState: 'blocked' });
  h.fake.ci.complete(repo.pullRequest(n).headSha, 'lint');
  await h.fake.waitFor(async () => ((await prState(ref, n)).readiness as { gitHubMergeability?: string } | undefined)?.gitHubMergeability === 'not_mergeable', {
    message: 'the queue to read the blocked PR',
  });
  expect(await prState(ref, n)).toMatchObject({ state: 'TESTING' });
  // Its run goes on: the tested commit passes and lands while the PR's own re-run is still going.
  const testBranch = repo.branches().find((b) => b.startsWith('mq/')) as string;
  h.fake.ci.complete(repo.branch(testBranch) as string, 'ci');
  await waitForState(ref, n, 'MERGED');
  expect(repo.pullRequest(n).merged).toBe(true);
});

test('a request for changes while a required check of the PR runs again: the block stands, the PR leaves the queue and does not land', async () => {
  const { repo, ref } = await queueFor({});
  repo.protectBranch('main', { requiredChecks: ['ci'], requiredApprovals: 1 });
  repo.setPermission('reviewer', 'write');
  const n = greenPullRequest(repo, { title: 'Reviewed twice' });
  repo.approve(n, 'reviewer');
  repo.addLabel(n, 'merge-queue');
  await waitForState(ref, n, 'TESTING');
  h.fake.ci.start(repo.pullRequest(n).headSha, 'ci');
  h.fake.state.review(h.fake.state.repo(repo.fullName), n, 'reviewer', 'CHANGES_REQUESTED');
  const demoted = await waitForState(ref, n, 'NOT_READY');
  expect(demoted.notReadyReason).toBe('not_mergeable');
  // Its run was dropped: nothing lands even when the test branch's CI would pass.
  for (const branch of repo.branches().filter((b) => b.startsWith('mq/'))) h.fake.ci.complete(repo.branch(branch) as string, 'ci');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(repo.pullRequest(n).merged).toBe(false);
  expect(await prState(ref, n)).toMatchObject({ state: 'NOT_READY' });
});

test('a push to the PR while it is tested cancels it (pushed_to)', async () => {
  const { repo, ref } = await queueFor();
  const n = greenPullRequest(repo, { title: 'Moving target' });
  repo.addLabel(n, 'merge-queue');
  await waitForState(ref, n, 'TESTING');
  repo.pushToPullRequest(n);
  const cancelled = await waitForState(ref, n, 'CANCELLED');
  expect((cancelled.timeline as Array<{ reason: string }>)[0]?.reason).toBe('pushed_to');
  await h.fake.waitFor(() => !repo.branches().some((b) => b.startsWith('mq/')), { message: 'the test branch to be deleted' });
});

test('a batch of three with one culprit: the two others merge, the culprit fails', async () => {
  const { repo, ref } = await queueFor();
  await h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', batch: true, batchingMinSize: 3, batchingMaxWaitTimeMinutes: 10 });
  const numbers = [1, 2, 3].map((i) => greenPullRequest(repo, { title: `Change ${i}` }));
  const culprit = numbers[1] as number;
  const stopCi = h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'], conclusion: ({ pullRequests }) => (pullRequests.includes(culprit) ? 'failure' : 'success') });
  try {
    for (const n of numbers) repo.addLabel(n, 'merge-queue');
    for (const n of numbers) await waitForState(ref, n, n === culprit ? 'FAILED' : 'MERGED');
    expect(numbers.map((n) => repo.pullRequest(n).merged)).toEqual([true, false, true]);
  } finally {
    stopCi();
  }
});

test('a PR merged outside the queue is MERGED; the queue goes on with the others on the new base', async () => {
  const { repo, ref } = await queueFor();
  const first = greenPullRequest(repo, { title: 'Merged by hand' });
  const second = greenPullRequest(repo, { title: 'Queued behind it' });
  // CI reports on every test branch, except that runs testing #first never finish: it is merged by hand meanwhile.
  const testsFirst = (prs: number[]) => prs.includes(first) && !repo.pullRequest(first).merged;
  const stopCi = h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'], conclusion: ({ pullRequests }) => (testsFirst(pullRequests) ? null : 'success') });
  try {
    repo.addLabel(first, 'merge-queue');
    repo.addLabel(second, 'merge-queue');
    await waitForState(ref, first, 'TESTING');
    repo.mergePullRequest(first, { method: 'merge' });
    const merged = await waitForState(ref, first, 'MERGED');
    expect((merged.timeline as Array<{ reason: string }>)[0]?.reason).toBe('merged_outside_queue');
    await waitForState(ref, second, 'MERGED');
    expect(h.fake.pullRequestsIn(repo.branch('main') as string)).toEqual(expect.arrayContaining([first, second]));
  } finally {
    stopCi();
  }
});

test('a webhook redelivered twice is applied once', async () => {
  const { repo, ref } = await queueFor();
  const n = greenPullRequest(repo, { title: 'Once' });
  repo.addLabel(n, 'merge-queue');
  await h.fake.webhooks.idle();
  const labeled = h.fake.webhooks.deliveries.filter((d) => d.event === 'pull_request' && d.action === 'labeled').at(-1);
  expect(labeled).toBeDefined();
  // Deliveries are answered before they are handled: the first one has been handled once the PR tests.
  const before = (await waitForState(ref, n, 'TESTING')).timeline as unknown[];
  await h.fake.webhooks.redeliver(labeled!.id);
  await h.fake.webhooks.redeliver(labeled!.id);
  await h.fake.webhooks.idle();
  const after = (await prState(ref, n)).timeline as unknown[];
  expect(after.length).toBe(before.length);
  const entry = await h.stores.entries.find((await h.stores.queues.find(ref as never, 'main'))!.id, n);
  expect(entry?.attempt).toBe(1);
});

// No checks named anywhere is the repository's configuration, no PR's verdict: landing stops, the PR keeps its place.
test('required checks missing → nothing is built or merged, the queue says why, the PR waits; once checks are named it lands', async () => {
  const { repo, ref } = await queueFor({});
  const n = repo.openPullRequest({ title: 'No checks anywhere' });
  repo.addLabel(n, 'merge-queue');
  const problems = await problemsOnceAny(h, ref);
  expect(problems).toEqual([expect.objectContaining({ kind: 'landing_blocked', message: expect.stringMatching(/No required status checks[\s\S]*update the queue/) })]);
  const waiting = await prState(ref, n);
  expect(waiting.state).not.toBe('FAILED');
  expect(waiting.waitingReason).toMatch(/No required status checks/);
  expect(repo.branches().filter((b) => b.startsWith('mq/'))).toEqual([]);

  // The operator names the check: the PR is built, tested and lands.
  const stopCi = h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  try {
    expect((await h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', requiredStatuses: ['ci'] })).status).toBe(200);
    await waitForState(ref, n, 'MERGED');
    expect(repo.pullRequest(n).merged).toBe(true);
    expect((await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).json().problems).toEqual([]);
  } finally {
    stopCi();
  }
});

// Found by a security review: the queue matched required checks by name only, so anyone who may post a status under
// the name (a workflow the PR brings, another App, a person with write access) passed a run GitHub binds to one App.
test('a required check bound to one App: a status of that name from anyone else does not pass the run; the App\'s own check does', async () => {
  const name = `widgets${++counter}`;
  const repo = h.fake.createRepo(`acme/${name}`);
  repo.protectBranch('main', { requiredChecks: [{ context: 'ci', appId: h.fake.ciApp.id }] });
  const ref = { host: 'github.com', owner: 'acme', name };
  expect((await h.api('/v1/createQueue', { repo: ref, targetBranch: 'main' })).status).toBe(200);
  const n = greenPullRequest(repo, { title: 'Bound check' });
  repo.addLabel(n, 'merge-queue');
  await waitForState(ref, n, 'TESTING');
  let testSha: string | null = null;
  await h.fake.waitFor(
    async () => {
      const details = (await h.api('/v1/getMergeQueueTestingDetails', { repo: ref, targetBranch: 'main', pr: { number: n } })).json() as { testBranchSha?: string | null };
      testSha = details.testBranchSha ?? null;
      return testSha !== null;
    },
    { message: 'the test commit' },
  );
  // Someone else reports the required name as passed on the tested commit.
  h.fake.ci.status(testSha as unknown as string, 'ci', 'success', { creator: 'mallory' });
  await h.fake.webhooks.idle();
  await new Promise((r) => setTimeout(r, 1_000));
  expect((await prState(ref, n)).state).toBe('TESTING');
  // The App the check is bound to reports it: the run passes and lands.
  h.fake.ci.complete(testSha as unknown as string, 'ci');
  await waitForState(ref, n, 'MERGED');
});

test('a label added by someone without write access (triage) does not queue the PR, and says why', async () => {
  const { repo, ref } = await queueFor();
  repo.setPermission('triager', 'triage');
  const n = greenPullRequest(repo, { title: 'Labelled by triage' });
  repo.addLabel(n, 'merge-queue', 'triager');
  await h.fake.waitFor(() => repo.comments(n).some((c) => /only people with write access/.test(c.body) && /@triager/.test(c.body)), { message: 'a reply to the triager' });
  expect(await prState(ref, n)).toEqual({});
});

test('the label taken off by someone without write access (triage) is put back, and the PR stays queued and lands', async () => {
  const { repo, ref } = await queueFor();
  repo.setPermission('writer', 'write');
  repo.setPermission('triager', 'triage');
  const n = greenPullRequest(repo, { title: 'Unlabelled by triage' });
  repo.addLabel(n, 'merge-queue', 'writer');
  await waitForState(ref, n, 'TESTING');
  repo.removeLabel(n, 'merge-queue', 'triager');
  await h.fake.waitFor(() => repo.comments(n).some((c) => /@triager/.test(c.body) && /the label is back/.test(c.body)), { message: 'a reply to the triager' });
  expect(repo.pullRequest(n).labels).toContain('merge-queue');
  // The PR's labels read again (an edit makes the queue read the PR): it keeps its place.
  repo.editPullRequest(n, { title: 'Unlabelled by triage, edited' }, 'writer');
  await h.fake.waitFor(async () => (await prState(ref, n)).prTitle === 'Unlabelled by triage, edited', { message: 'the edit read' });
  expect((await prState(ref, n)).state).toBe('TESTING');
  const testBranch = repo.branches().find((b) => b.startsWith('mq/')) as string;
  h.fake.ci.complete(repo.branch(testBranch) as string, 'ci');
  await waitForState(ref, n, 'MERGED');
});

test('/mq commands: a writer queues with a priority; a reader gets a reply; a branch without a queue gets a comment', async () => {
  const { repo, ref } = await queueFor();
  repo.setPermission('writer', 'write');
  repo.setPermission('reader', 'read');
  const n = greenPullRequest(repo, { title: 'By command' });
  repo.comment(n, '/mq merge --priority=high', 'reader');
  await h.fake.waitFor(() => repo.comments(n).some((c) => /write access/.test(c.body)), { message: 'a reply to the reader' });
  expect((await h.api('/v1/getSubmittedPullRequest', { repo: ref, targetBranch: 'main', pr: { number: n } })).status).toBe(404);
  repo.comment(n, '/mq merge --priority=high', 'writer');
  await h.fake.waitFor(async () => (await h.api('/v1/getSubmittedPullRequest', { repo: ref, targetBranch: 'main', pr: { number: n } })).status === 200);
  expect((await prState(ref, n)).priorityName).toBe('high');
  repo.comment(n, '/mq cancel', 'writer');
  await waitForState(ref, n, 'CANCELLED');

  repo.createBranch('release');
  const other = repo.openPullRequest({ title: 'To a branch with no queue', base: 'release' });
  repo.addLabel(other, 'merge-queue');
  await h.fake.waitFor(() => repo.comments(other).some((c) => /no merge queue for `release`/.test(c.body)), { message: 'the no-queue comment' });
});

test('removing the label cancels; a push to the target branch rebuilds the run on the new base', async () => {
  const { repo, ref } = await queueFor();
  const n = greenPullRequest(repo, { title: 'Label off' });
  repo.addLabel(n, 'merge-queue');
  await waitForState(ref, n, 'TESTING');
  repo.removeLabel(n, 'merge-queue');
  const cancelled = await waitForState(ref, n, 'CANCELLED');
  expect((cancelled.timeline as Array<{ reason: string }>)[0]?.reason).toBe('user_requested');

  const m = greenPullRequest(repo, { title: 'Rebuilt' });
  repo.addLabel(m, 'merge-queue');
  await waitForState(ref, m, 'TESTING');
  const before = (await h.api('/v1/getMergeQueueTestingDetails', { repo: ref, targetBranch: 'main', pr: { number: m } })).json();
  const pushed = repo.push('main', { change: 'hotfix' });
  let rebuilt: Record<string, unknown> = {};
  await h.fake.waitFor(async () => {
    rebuilt = (await h.api('/v1/getMergeQueueTestingDetails', { repo: ref, targetBranch: 'main', pr: { number: m } })).json();
    return rebuilt.testRunId !== before.testRunId && rebuilt.baseSha === pushed && typeof rebuilt.testBranchSha === 'string';
  }, { message: 'a run rebuilt on the pushed base, its test branch built' });
  h.fake.ci.complete(rebuilt.testBranchSha as string, 'ci');
  await waitForState(ref, m, 'MERGED');
  expect(h.fake.treeOf(repo.branch('main') as string)).toContain('hotfix');
});

test('a merge conflict fails only the conflicting PR (merge_conflict); the other merges', async () => {
  const { repo, ref } = await queueFor();
  expect((await h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', concurrency: 2 })).status).toBe(200);
  const first = greenPullRequest(repo, { title: 'First' });
  const second = greenPullRequest(repo, { title: 'Conflicts with first' });
  repo.declareConflict(first, second);
  repo.addLabel(first, 'merge-queue');
  await waitForState(ref, first, 'TESTING');
  // Tested on top of #first, #second cannot even be applied: it alone fails.
  repo.addLabel(second, 'merge-queue');
  const failed = await waitForState(ref, second, 'FAILED');
  expect((failed.timeline as Array<{ reason: string }>)[0]?.reason).toBe('merge_conflict');
  expect((await prState(ref, first)).state).toBe('TESTING');
  // CI reports on #first's test branch, which nothing disturbed.
  const details = (await h.api('/v1/getMergeQueueTestingDetails', { repo: ref, targetBranch: 'main', pr: { number: first } })).json();
  h.fake.ci.complete(details.testBranchSha as string, 'ci');
  await waitForState(ref, first, 'MERGED');
});

test('operators see the GitHub calls the queue made, by method and status', async () => {
  const text = await h.metrics.registry.metrics();
  const calls = [...text.matchAll(/mq_github_requests_total\{method="(\w+)",status="(\d+)"\} (\d+)/g)];
  expect(calls.some(([, method, status, count]) => method === 'PATCH' && status === '200' && Number(count) > 0)).toBe(true); // landings (ref updates)
  expect(calls.some(([, method, status]) => method === 'POST' && status === '409')).toBe(true); // the declared merge conflict
});

test('branch protection changed between runs, no webhook told of it: the next run requires what it says now', async () => {
  const { repo, ref } = await queueFor();
  const stopCi = h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci', 'lint'] });
  const required = async (n: number) => (await h.api('/v1/getMergeQueueTestingDetails', { repo: ref, targetBranch: 'main', pr: { number: n } })).json().requiredStatuses;
  try {
    const first = greenPullRequest(repo, { title: 'One' });
    repo.addLabel(first, 'merge-queue');
    await waitForState(ref, first, 'MERGED');
    expect(await required(first)).toEqual(['ci']);
    // The repository's settings are kept between runs; the checks that decide a run are read for each.
    repo.protectBranch('main', { requiredChecks: ['ci', 'lint'] });
    const second = repo.openPullRequest({ title: 'Two' });
    for (const check of ['ci', 'lint']) h.fake.ci.complete(repo.pullRequest(second).headSha, check);
    repo.addLabel(second, 'merge-queue');
    await waitForState(ref, second, 'MERGED');
    expect(await required(second)).toEqual(['ci', 'lint']);
  } finally {
    stopCi();
  }
});

// Found by review: GitHub lands only by fast-forward, so a lane's run tested on a base another lane then moved was
// refused, rebuilt, tested again, and refused again while that lane kept landing. No e2e ran parallel mode on GitHub.
describe('parallel queue: a lane whose run passes after another lane landed', () => {
  async function twoLanesPassInTurn(requiredChecks?: string[]) {
    const { repo, ref } = await queueFor(requiredChecks ? { requiredChecks } : {});
    // The queue waits for `ci` on its runs either way; the branch's protection may require it on what lands too.
    await h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', mode: 'parallel', concurrency: 2, ...(requiredChecks ? {} : { requiredStatuses: ['ci'] }) });
    await h.fake.waitFor(async () => (await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).json().mode === 'parallel', { message: 'the queue to be parallel' });
    const web = greenPullRequest(repo, { title: 'Web' });
    const api = greenPullRequest(repo, { title: 'Api' });
    for (const [n, target] of [[web, '//web'], [api, '//api']] as const) {
      const targets = await h.api('/v1/setImpactedTargets', { repo: ref, targetBranch: 'main', pr: { number: n, sha: repo.pullRequest(n).headSha }, impactedTargets: [target] });
      expect(targets.status).toBe(200);
      repo.addLabel(n, 'merge-queue');
    }
    const detailsOf = async (n: number) => {
      const res = await h.api('/v1/getMergeQueueTestingDetails', { repo: ref, targetBranch: 'main', pr: { number: n } });
      return res.status === 200 ? res.json() : {}; // not submitted yet: its label's delivery is still on its way
    };
    const testBranchOf = async (n: number, not?: string) => {
      await h.fake.waitFor(async () => { const sha = (await detailsOf(n)).testBranchSha as string | undefined; return Boolean(sha) && sha !== not; }, { message: `a test branch for #${n}` });
      return (await detailsOf(n)).testBranchSha as string;
    };
    // The api lane passes and lands first; the web lane's run, built on the branch before that, passes after.
    const webFirst = await testBranchOf(web);
    h.fake.ci.complete(await testBranchOf(api), 'ci');
    await waitForState(ref, api, 'MERGED');
    h.fake.ci.complete(webFirst, 'ci');
    return { repo, ref, web, api, webFirst, testBranchOf, detailsOf };
  }

  test('no checks required by the branch (the queue requires them of its runs): its PRs land on the branch as it is, without a second run', async () => {
    const { repo, ref, web, api, webFirst, detailsOf } = await twoLanesPassInTurn();
    await waitForState(ref, web, 'MERGED');
    expect(h.fake.pullRequestsIn(repo.branch('main') as string).sort()).toEqual([web, api].sort());
    // Landed from the run that passed first: no second run was made for it.
    expect((await detailsOf(web)).testBranchSha).toBe(webFirst);
  });

  test('checks required on every commit the branch takes: tested once more on the branch as it is, then landed (no loop, no block)', async () => {
    const { repo, ref, web, api, webFirst, testBranchOf } = await twoLanesPassInTurn(['ci']);
    h.fake.ci.complete(await testBranchOf(web, webFirst), 'ci');
    await waitForState(ref, web, 'MERGED');
    expect(h.fake.pullRequestsIn(repo.branch('main') as string).sort()).toEqual([web, api].sort());
  });
});
