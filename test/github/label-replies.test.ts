/**
 * What the App says to a label change it does not carry out: nothing when there is nothing to say (the PR already left
 * the queue), a refusal when the sender may not (a sender GitHub knows no permission of, such as a bot, included).
 */
import { appOnFakeGitHub, handled } from './app-on-fake.js';

// Found by review: the ejection comment tells people to take the label off before queueing again, and doing so was
// answered ":warning: … is not in the queue: it is already FAILED".
test('a writer taking the label off a PR the queue already ejected or merged: nothing is said', async () => {
  const ended = { ok: false, failure: { kind: 'invalid', message: 'Pull request #1 is not in the queue: it is already FAILED.' } };
  const app = await appOnFakeGitHub({ cancelAnswer: ended });
  try {
    app.repo.setPermission('alice', 'write');
    const pr = app.repo.openPullRequest({ title: 'Add a widget', user: 'bob' });
    app.repo.addLabel(pr, 'merge-queue', 'alice');
    await handled(app, ['pull_request'], () => app.repo.removeLabel(pr, 'merge-queue', 'alice'));
    expect(app.calls).toEqual([`cancel #${pr}`]);
    expect(app.repo.comments(pr)).toEqual([]);
  } finally {
    await app.fake.close();
  }
});

// Found by review: the permission lookup's 404 was thrown, so the delivery was tried five times, given up, and nobody told.
test('a label from a sender GitHub knows no permission of (404): refused and told, at the first attempt', async () => {
  const app = await appOnFakeGitHub({ defaultPermission: 'write' });
  try {
    const pr = app.repo.openPullRequest({ title: 'Add a widget', user: 'bob' });
    app.fake.failNext({ operationId: 'repos/get-collaborator-permission-level', status: 404, message: 'Not Found' });
    await handled(app, ['pull_request'], () => app.repo.addLabel(pr, 'merge-queue', 'helper-bot[bot]'));
    expect(app.calls).toEqual([]);
    expect(app.repo.comments(pr).map((c) => c.body)).toEqual([expect.stringContaining('@helper-bot[bot], only people with write access to this repository can queue pull requests')]);
  } finally {
    await app.fake.close();
  }
});
