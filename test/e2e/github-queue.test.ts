/**
 * The queue on GitHub, end to end: the service with its GitHub App against a
 * stateful fake GitHub whose every request is validated against GitHub's
 * OpenAPI description (test/support/fake-github). Webhooks are real signed
 * deliveries to the running service.
 */
import { startGitHubHarness, type GitHubHarness } from '../support/github-harness.js';

let h: GitHubHarness;
beforeAll(async () => {
  h = await startGitHubHarness();
}, 60_000);
afterAll(() => h.close());
afterEach(() => {
  expect(h.fake.violations).toEqual([]);
});

let counter = 0;
async function queueFor(options: { requiredChecks?: string[] } = { requiredChecks: ['ci'] }) {
  const name = `widgets${++counter}`;
  const repo = h.fake.createRepo(`acme/${name}`);
  if (options.requiredChecks) repo.protectBranch('main', { requiredChecks: options.requiredChecks });
  const created = await h.api('/v1/createQueue', { repo: { host: 'github.com', owner: 'acme', name }, targetBranch: 'main' });
  expect(created.status).toBe(200);
  return { repo, ref: { host: 'github.com', owner: 'acme', name } };
}

async function prState(ref: object, number: number) {
  return (await h.api('/v1/getSubmittedPullRequest', { repo: ref, targetBranch: 'main', pr: { number }, includeTimeline: true })).json();
}

async function waitForState(ref: object, number: number, state: string) {
  let last: Record<string, unknown> = {};
  await h.fake.waitFor(
    async () => {
      last = await prState(ref, number);
      return last.state === state;
    },
    { timeoutMs: 20_000, message: `PR #${number} to be ${state}` },
  );
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
    const check = h.fake.checkRuns(repo.pullRequest(n).headSha, 'Merge Queue (main)');
    expect(check.at(-1)).toMatchObject({ status: 'completed', conclusion: 'success' });
  } finally {
    stopCi();
  }
});
