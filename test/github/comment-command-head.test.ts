/**
 * `/mq merge` acts on the head GitHub gives when the delivery is handled. A
 * push after the comment (GitHub's delivery delay, or a retry of a failed
 * delivery minutes later) would get a head nobody approved queued, by an
 * author who may have no write access (found by review). The PR changed after
 * the comment (GitHub's updated_at): the command is refused with the reason.
 */
import { generateKeyPairSync } from 'node:crypto';
import { Probot } from 'probot';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { githubApp, type GitHubAppDeps } from '../../src/github/github-app.js';
import { startFakeGitHub, type BuiltEvent, type FakeGitHub, type FakeRepo } from '../support/fake-github/index.js';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });

let fake: FakeGitHub;
let repo: FakeRepo;
let probot: Probot;
let submittedHeads: Array<string | undefined>;
let clock = Date.parse('2026-11-26T12:00:00Z');

beforeEach(async () => {
  fake = await startFakeGitHub({ defaultPermission: 'read', now: () => new Date(clock) });
  repo = fake.createRepo('acme/widgets');
  repo.setPermission('alice', 'write');
  submittedHeads = [];
  const queue = { id: 'q1', repo: { host: 'github.com', owner: 'acme', name: 'widgets' }, targetBranch: 'main', config: { ...DEFAULT_QUEUE_CONFIG } };
  const deps = {
    stores: { queues: { find: async () => queue } },
    pullRequests: { submit: async (ref: { headSha?: string }) => (submittedHeads.push(ref.headSha), { ok: true, value: {} }) },
    hostName: 'github.com',
    rememberInstallation() {},
  } as unknown as GitHubAppDeps;
  probot = new Probot({ appId: fake.app.id, privateKey, secret: 'secret', baseUrl: fake.baseUrl, logLevel: 'fatal' });
  await probot.load(githubApp(deps));
});
afterEach(async () => {
  await fake.close();
});

/** The comment's delivery, taken out of the fake's outbox to be handled when the test says. */
function commentDelivery(): BuiltEvent {
  const comment = fake.webhooks.drop().find((e: BuiltEvent) => e.event === 'issue_comment');
  if (!comment) throw new Error('no issue_comment delivery');
  return comment;
}
const handle = (event: BuiltEvent) => probot.receive({ id: `d${clock}`, name: event.event, payload: event.payload } as Parameters<Probot['receive']>[0]);

test('a push after /mq merge, before its delivery is handled: nothing is queued, and the writer is told why', async () => {
  const pr = repo.openPullRequest({ title: 'Add a widget', user: 'mallory' });
  clock += 60_000;
  repo.comment(pr, '/mq merge', 'alice');
  const delivery = commentDelivery();
  clock += 60_000; // handled late: the author pushed meanwhile
  const pushed = repo.pushToPullRequest(pr, { sender: 'mallory' });
  await handle(delivery);
  expect(submittedHeads).toEqual([]);
  const replies = repo.comments(pr).filter((c) => c.user !== 'alice');
  expect(replies.map((c) => c.body)).toEqual([expect.stringContaining(`changed after your \`/mq merge\``)]);
  expect(replies[0]?.body).toContain(pushed.slice(0, 7));
  fake.assertNoViolations();
});

test('nothing changed after the comment: the head it was given for is queued, even when handled late', async () => {
  const pr = repo.openPullRequest({ title: 'Add a widget', user: 'mallory' });
  const head = repo.pullRequest(pr).headSha;
  clock += 60_000;
  repo.comment(pr, '/mq merge', 'alice');
  const delivery = commentDelivery();
  clock += 5 * 60_000;
  await handle(delivery);
  expect(submittedHeads).toEqual([head]);
  fake.assertNoViolations();
});
