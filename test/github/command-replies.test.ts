/**
 * The App answers a `/mq` comment it cannot read only to those who may command the queue: anyone else is told they
 * may not, without their words echoed under the App's name (found by review: any commenter on a public repository
 * could make the App post a link or an @mention).
 */
import type { Probot } from 'probot';
import type { BuiltEvent, FakeGitHub, FakeRepo } from '../support/fake-github/index.js';
import { appOnFakeGitHub, handled } from './app-on-fake.js';

let fake: FakeGitHub;
let repo: FakeRepo;
let probot: Probot;
let calls: string[];

beforeEach(async () => {
  ({ fake, repo, probot, calls } = await appOnFakeGitHub({ defaultPermission: 'read' }));
  repo.setPermission('alice', 'write');
});
afterEach(async () => {
  await fake.close();
});

async function commentAndHandle(pr: number, body: string, user: string): Promise<string[]> {
  await handled({ fake, probot }, ['issue_comment'], () => repo.comment(pr, body, user));
  return repo.comments(pr).filter((c) => c.user !== user && c.user !== 'alice' && c.user !== 'mallory').map((c) => c.body);
}

test('an unreadable command from someone without write access: told they may not, nothing of theirs echoed', async () => {
  const pr = repo.openPullRequest({ title: 'Add a widget', user: 'bob' });
  const replies = await commentAndHandle(pr, '/mq x`[sign in again](https://evil.example/login)`', 'mallory');
  expect(replies).toEqual([expect.stringContaining('@mallory, only people with write access')]);
  expect(replies.join()).not.toContain('evil.example');
});

test('an unreadable command from a writer: told what was wrong, with the word kept inside its code span', async () => {
  const pr = repo.openPullRequest({ title: 'Add a widget', user: 'bob' });
  const replies = await commentAndHandle(pr, '/mq x`@acme/everyone`', 'alice');
  expect(replies).toEqual([expect.stringContaining('Unknown command')]);
  expect(replies[0]).toContain('`` /mq x`@acme/everyone` ``'); // padded: the word ends with a backtick
});

// Found by review: `--priority` alone sent noBatch: false, which turned a queued PR's --no-batch off.
test('/mq merge passes on only what it names: --priority alone leaves noBatch as it is, --no-batch sets it', async () => {
  const setup = await appOnFakeGitHub({ defaultPermission: 'read' });
  try {
    setup.repo.setPermission('alice', 'write');
    const pr = setup.repo.openPullRequest({ title: 'Add a widget', user: 'bob' });
    for (const body of ['/mq merge --priority=high', '/mq merge --no-batch']) await handled(setup, ['issue_comment'], () => setup.repo.comment(pr, body, 'alice'));
    const head = setup.repo.pullRequest(pr).headSha;
    expect(setup.submits).toEqual([
      { priority: 10, headSha: head },
      { noBatch: true, headSha: head },
    ]);
  } finally {
    await setup.fake.close();
  }
});

// Found by review: a queue only the repository's file names is configured for writers alone, and anyone else was told there is no queue.
test('no queue stored for the branch: someone without write access is told they may not, by command or by label', async () => {
  const setup = await appOnFakeGitHub({ defaultPermission: 'read', noStoredQueue: true });
  try {
    const pr = setup.repo.openPullRequest({ title: 'Add a widget', user: 'bob' });
    await handled(setup, ['issue_comment', 'pull_request'], () => {
      setup.repo.comment(pr, '/mq merge', 'mallory');
      setup.repo.addLabel(pr, 'merge-queue', 'mallory');
    });
    const replies = setup.repo.comments(pr).filter((c) => c.user !== 'mallory').map((c) => c.body);
    expect(replies).toEqual([expect.stringContaining('@mallory, only people with write access to this repository can use queue commands'), expect.stringContaining('@mallory, only people with write access to this repository can queue pull requests')]);
    expect(replies.join()).not.toContain('There is no merge queue');
  } finally {
    await setup.fake.close();
  }
});

// Left alone before, then found by the manners scenario's kind of fault: a reply whose POST lost its answer to a 5xx
// was posted again blind by the client's retry plugin, and a delivery handled again posted its reply again.
describe('a reply is said once per delivery', () => {
  let app: Awaited<ReturnType<typeof appOnFakeGitHub>>;
  beforeEach(async () => {
    app = await appOnFakeGitHub({ defaultPermission: 'read' });
    app.repo.setPermission('alice', 'write');
  });
  afterEach(async () => {
    app.fake.assertNoViolations();
    await app.fake.close();
  });

  const repliesOn = (pr: number) => app.repo.comments(pr).filter((c) => c.user !== 'alice').map((c) => c.body);

  test("its POST answered 502 after GitHub made the comment: found, not posted again", async () => {
    const pr = app.repo.openPullRequest({ title: 'Add a widget', user: 'bob' });
    app.fake.failNext({ operationId: 'issues/create-comment', status: 502, message: 'Server Error', afterHandling: true });
    await handled(app, ['issue_comment'], () => app.repo.comment(pr, '/mq frobnicate', 'alice'));
    expect(repliesOn(pr)).toEqual([expect.stringContaining('Unknown command')]);
    expect(app.fake.requestsTo('issues/create-comment').map((r) => r.status)).toEqual([502]); // made, its answer lost, and not asked again
  });

  test('its POST answered 502 before anything was made: asked again, said once', async () => {
    const pr = app.repo.openPullRequest({ title: 'Add a widget', user: 'bob' });
    app.fake.failNext({ operationId: 'issues/create-comment', status: 502, message: 'Server Error' });
    await handled(app, ['issue_comment'], () => app.repo.comment(pr, '/mq frobnicate', 'alice'));
    expect(repliesOn(pr)).toEqual([expect.stringContaining('Unknown command')]);
  });

  test('the same delivery handled twice (a retry after a failure): one reply; another delivery of the same words gets its own', async () => {
    const pr = app.repo.openPullRequest({ title: 'Add a widget', user: 'bob' });
    app.fake.webhooks.drop();
    app.repo.addLabel(pr, 'merge-queue', 'mallory');
    const [labeled] = app.fake.webhooks.drop().filter((e: BuiltEvent) => e.event === 'pull_request');
    const delivery = { id: 'delivery-1', name: labeled!.event, payload: labeled!.payload } as Parameters<Probot['receive']>[0];
    await app.probot.receive(delivery);
    await app.probot.receive(delivery);
    expect(repliesOn(pr)).toEqual([expect.stringContaining('@mallory, only people with write access')]);
    await app.probot.receive({ ...delivery, id: 'delivery-2' });
    expect(repliesOn(pr)).toHaveLength(2);
  });
});

// Found by review: a delivery handled again after a failure (which may have reached the queue's inbox) restarted the
// tests a second time, cancelling the run the first restart started. The comment's id goes with the request; the
// runner restarts once per id (test/runner/restart-once.test.ts).
test('/mq restart names its comment, so the same comment handled twice asks for the same restart', async () => {
  const pr = repo.openPullRequest({ title: 'Add a widget', user: 'bob' });
  fake.webhooks.drop();
  repo.comment(pr, '/mq restart', 'alice');
  const [commented] = fake.webhooks.drop().filter((e: BuiltEvent) => e.event === 'issue_comment');
  const delivery = { id: 'delivery-restart', name: commented!.event, payload: commented!.payload } as Parameters<Probot['receive']>[0];
  await probot.receive(delivery);
  await probot.receive(delivery);
  const commentId = (commented!.payload as { comment: { id: number } }).comment.id;
  expect(calls).toEqual([`restart #${pr} for comment:${commentId}`, `restart #${pr} for comment:${commentId}`]);
});

// Found by review: a cancel handled late (its delivery retried, or asked of GitHub again days later) took out a PR
// another writer had queued again since the comment.
test('a /mq cancel or restart written before the PR was queued again changes nothing and says so; one written after acts', async () => {
  const at = Date.parse('2026-11-29T12:00:00Z');
  for (const [queuedAt, acts] of [
    [at + 5 * 60_000, false], // queued again five minutes after the comment
    [at - 5 * 60_000, true], // queued before it
  ] as const) {
    const setup = await appOnFakeGitHub({ defaultPermission: 'read', queued: [1], queuedAt: new Date(queuedAt), now: () => new Date(at) });
    try {
      setup.repo.setPermission('alice', 'write');
      const pr = setup.repo.openPullRequest({ title: 'Add a widget', user: 'bob' });
      expect(pr).toBe(1);
      for (const body of ['/mq cancel', '/mq restart']) await handled(setup, ['issue_comment'], () => setup.repo.comment(pr, body, 'alice'));
      const replies = setup.repo.comments(pr).filter((c) => c.user !== 'alice').map((c) => c.body);
      if (acts) {
        expect(setup.calls.filter((c) => !c.startsWith('changed'))).toEqual([`cancel #1`, expect.stringMatching(/^restart #1 for comment:/)]);
        expect(replies).toEqual([]);
      } else {
        expect(setup.calls.filter((c) => /cancel|restart/.test(c))).toEqual([]);
        expect(replies).toEqual([expect.stringContaining('`/mq cancel` was written before #1 was queued again'), expect.stringContaining('`/mq restart` was written before #1 was queued again')]);
      }
    } finally {
      await setup.fake.close();
    }
  }
});
