/**
 * Check and status events: a queue's test commit is judged and nothing more is read (found by review: every check of
 * every test run read every queue's entries); any other commit may be a waiting PR's head (statuses never name PRs),
 * found among the cached entries, not by reading the queue.
 */
import { appOnFakeGitHub, handled, type AppOnFake } from './app-on-fake.js';

let app: AppOnFake | null = null;
afterEach(async () => {
  await app?.fake.close();
  app = null;
});

test("a status on a queue's test commit is judged, and no entries are read for it", async () => {
  const testCommits: string[] = [];
  app = await appOnFakeGitHub({ testCommits });
  const { fake, repo } = app;
  const sha = repo.pullRequest(repo.openPullRequest({ title: 'Built as a test commit' })).headSha;
  testCommits.push(sha);
  app.calls.length = 0;
  await handled(app, ['status'], () => fake.ci.status(sha, 'ci', 'success'));
  expect(app.calls).toEqual([`checks ${sha.slice(0, 7)}`]);
});

test("a status on a waiting PR's head tells its queue, found in the cached entries", async () => {
  const waiting: Array<{ prNumber: number; headSha: string }> = [];
  app = await appOnFakeGitHub({ waiting });
  const { fake, repo } = app;
  const n = repo.openPullRequest({ title: 'Waits for its checks' });
  const sha = repo.pullRequest(n).headSha;
  waiting.push({ prNumber: n, headSha: sha });
  app.calls.length = 0;
  await handled(app, ['status'], () => fake.ci.status(sha, 'ci', 'success'));
  expect(app.calls).toEqual([`checks ${sha.slice(0, 7)}`, 'enqueued read', `changed #${n}`]);
});

test('a check run created queued or in progress is not news; created completed, or completing, it is (found by review: each job of a CI read the PR twice)', async () => {
  app = await appOnFakeGitHub();
  const { fake, repo } = app;
  const n = repo.openPullRequest({ title: 'Its CI runs' });
  const sha = repo.pullRequest(n).headSha;
  app.calls.length = 0;
  await handled(app, ['check_run'], () => fake.ci.start(sha, 'lint'));
  expect(app.calls).toEqual([]);
  await handled(app, ['check_run'], () => fake.ci.complete(sha, 'lint'));
  expect(app.calls).toEqual([`checks ${sha.slice(0, 7)}`, `changed #${n}`]);
  app.calls.length = 0;
  // Created already completed (a check that reports only its result): its `created` event counts on its own.
  fake.webhooks.drop();
  fake.ci.report(sha, 'build');
  const created = fake.webhooks.drop().find((e) => e.event === 'check_run' && e.action === 'created');
  expect((created?.payload as { check_run?: { status?: string } }).check_run?.status).toBe('completed');
  await app.probot.receive({ id: 'created-completed', name: 'check_run', payload: created!.payload } as Parameters<typeof app.probot.receive>[0]);
  expect(app.calls).toEqual([`checks ${sha.slice(0, 7)}`, `changed #${n}`]);
});
