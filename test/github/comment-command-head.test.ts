/**
 * `/mq merge` acts on the head GitHub gives when the delivery is handled. A
 * push after the comment (GitHub's delivery delay, or a retry of a failed
 * delivery minutes later) would get a head nobody approved queued, by an
 * author who may have no write access (found by review). The PR changed after
 * the comment (GitHub's updated_at): the command is refused with the reason.
 */
import type { Probot } from 'probot';
import type { BuiltEvent, FakeGitHub, FakeRepo } from '../support/fake-github/index.js';
import { appOnFakeGitHub } from './app-on-fake.js';

let fake: FakeGitHub;
let repo: FakeRepo;
let probot: Probot;
let submittedHeads: Array<string | undefined>;
let clock = Date.parse('2026-11-26T12:00:00Z');

beforeEach(async () => {
  ({ fake, repo, probot, submittedHeads } = await appOnFakeGitHub({ defaultPermission: 'read', now: () => new Date(clock) }));
  repo.setPermission('alice', 'write');
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
