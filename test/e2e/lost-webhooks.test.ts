/**
 * GitHub never redelivers a delivery that failed on its own: events sent while the service was down are lost unless
 * the service asks for them again (src/github/redelivery.ts), on the fake GitHub with its deliveries API.
 */
import { startGitHubHarness, type GitHubHarness } from '../support/github-harness.js';

let h: GitHubHarness;
beforeAll(async () => {
  h = await startGitHubHarness({ redeliveryMs: 300 });
}, 60_000);
afterAll(() => h.close(), 30_000);
afterEach(() => {
  expect(h.fake.violations).toEqual([]);
});

/** Nothing listens here: a delivery to it fails to connect, as one to a service that is down. */
const DOWN = { url: 'http://127.0.0.1:9/api/github/webhooks', secret: 'unused' };

test('a label added while the service was down is delivered again once it is back, and the PR is queued and lands', async () => {
  const name = 'lost-label';
  const repo = h.fake.createRepo(`acme/${name}`);
  repo.protectBranch('main', { requiredChecks: ['ci'] });
  const ref = { host: 'github.com', owner: 'acme', name };
  expect((await h.api('/v1/createQueue', { repo: ref, targetBranch: 'main' })).status).toBe(200);
  const stopCi = h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  try {
    const n = repo.openPullRequest({ title: 'Labelled during a deploy' });
    h.fake.ci.complete(repo.pullRequest(n).headSha, 'ci');
    await h.fake.webhooks.idle();
    // The service is down while the PR is labelled: GitHub's delivery fails, and GitHub does not try again by itself.
    h.fake.webhooks.pause();
    repo.addLabel(n, 'merge-queue');
    const missed = h.fake.webhooks.drop();
    expect(missed.some((e) => e.event === 'pull_request' && e.action === 'labeled')).toBe(true);
    for (const event of missed) expect((await h.fake.webhooks.sendBuilt(event, { target: DOWN })).status).toBeUndefined();
    h.fake.webhooks.resume();

    const state = async () => {
      const res = await h.api('/v1/getSubmittedPullRequest', { repo: ref, targetBranch: 'main', pr: { number: n } });
      return res.status === 200 ? (res.json() as { state: string }).state : null; // 404 until the label is delivered
    };
    await h.fake.waitFor(async () => (await state()) === 'MERGED', {
      timeoutMs: 20_000,
      message: 'the PR labelled while the service was down to land',
    });
    // Each missed event was delivered again once (same id), and answered.
    const labeled = h.fake.webhooks.deliveries.filter((d) => d.event === 'pull_request' && d.action === 'labeled');
    expect(labeled.map((d) => d.status)).toEqual([undefined, 202]);
    expect(new Set(labeled.map((d) => d.id)).size).toBe(1);
  } finally {
    stopCi();
  }
});
