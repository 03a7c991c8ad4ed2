/**
 * The queue file's check run on a pushed commit is made once per push delivery: a POST whose answer a 5xx lost is
 * not asked again blind (the client's retry plugin would), and a delivery handled again finds the check run it made.
 * Before, either gave the commit two "Merge queue settings" check runs. Through the Octokit production gives Probot.
 */
import type { Probot } from 'probot';
import { QUEUE_FILE_CHECK_NAME } from '../../src/github/queue-file-sync.js';
import { appOnFakeGitHub, type AppOnFake } from './app-on-fake.js';

const FILE = '.github/merge-queue.yml';
let app: AppOnFake;
beforeEach(async () => {
  app = await appOnFakeGitHub({ defaultPermission: 'write' });
  app.repo.createBranch('tweak');
});
afterEach(async () => {
  app.fake.assertNoViolations();
  await app.fake.close();
});

/** A push of the queue file to a branch (checked there, not applied), as the delivery GitHub would send. */
function pushDelivery(id: string): { sha: string; delivery: Parameters<Probot['receive']>[0] } {
  app.fake.webhooks.drop();
  const sha = app.repo.push('tweak', { change: 'queue file', files: { [FILE]: 'queues:\n  main:\n    concurrency: 2\n' } });
  const push = app.fake.webhooks.drop().find((e) => e.event === 'push')!;
  return { sha, delivery: { id, name: push.event, payload: push.payload } as Parameters<Probot['receive']>[0] };
}

test("the check run's POST answered 502 after GitHub made it: found, not made again", async () => {
  const { sha, delivery } = pushDelivery('push-1');
  app.fake.failNext({ operationId: 'checks/create', status: 502, message: 'Server Error', afterHandling: true });
  await app.probot.receive(delivery);
  expect(app.fake.checkRuns(sha, QUEUE_FILE_CHECK_NAME).map((run) => run.conclusion)).toEqual(['success']);
  expect(app.fake.requestsTo('checks/create').map((r) => r.status)).toEqual([502]);
});

test('the same push delivery handled twice: one check run; another delivery of the push gets its own', async () => {
  const { sha, delivery } = pushDelivery('push-1');
  await app.probot.receive(delivery);
  await app.probot.receive(delivery);
  expect(app.fake.checkRuns(sha, QUEUE_FILE_CHECK_NAME)).toHaveLength(1);
  await app.probot.receive({ ...delivery, id: 'push-2' });
  expect(app.fake.checkRuns(sha, QUEUE_FILE_CHECK_NAME)).toHaveLength(2);
  // The first delivery handled again after the second made a newer run: it still finds its own (GitHub lists only
  // the newest run of a name unless asked for all).
  await app.probot.receive(delivery);
  expect(app.fake.checkRuns(sha, QUEUE_FILE_CHECK_NAME)).toHaveLength(2);
});
