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

// Found by a review of the App's event handling: GitHub answers a bot's permission with 404, so no bot's label
// (dependabot's own `labels:` setting, a workflow's) could ever queue a PR.
test('a bot the queue names in labelingBots queues and unqueues by label; another bot is refused and told how to allow it', async () => {
  const trusted = await appOnFakeGitHub({ defaultPermission: 'write', config: { labelingBots: ['Dependabot[bot]'] } });
  try {
    const pr = trusted.repo.openPullRequest({ title: 'Bump lodash', user: 'dependabot[bot]' });
    await handled(trusted, ['pull_request'], () => trusted.repo.addLabel(pr, 'merge-queue', 'dependabot[bot]'));
    await handled(trusted, ['pull_request'], () => trusted.repo.removeLabel(pr, 'merge-queue', 'dependabot[bot]'));
    expect(trusted.calls).toEqual([`submit #${pr}`, `cancel #${pr}`]);
    expect(trusted.fake.requestsTo('repos/get-collaborator-permission-level')).toEqual([]); // a named bot is not asked about
    expect(trusted.repo.comments(pr)).toEqual([]);
  } finally {
    await trusted.fake.close();
  }
  const other = await appOnFakeGitHub({ defaultPermission: 'write', config: { labelingBots: ['dependabot[bot]'] } });
  try {
    const pr = other.repo.openPullRequest({ title: 'Bump react', user: 'renovate[bot]' });
    other.fake.failNext({ operationId: 'repos/get-collaborator-permission-level', status: 404, message: 'Not Found' });
    await handled(other, ['pull_request'], () => other.repo.addLabel(pr, 'merge-queue', 'renovate[bot]'));
    expect(other.calls).toEqual([]);
    expect(other.repo.comments(pr).map((c) => c.body)).toEqual([expect.stringMatching(/@renovate\[bot\], only people with write access[\s\S]*`labelingBots` setting names it/)]);
  } finally {
    await other.fake.close();
  }
});

// Found by review: the refusal said "nothing changed in the queue", and the runner's next read of the PR's labels took
// the PR out without the label all the same.
test('triage taking the label off a queued PR: the label is put back and the queue keeps it; the App\'s own label is not answered', async () => {
  const app = await appOnFakeGitHub({ queued: [1] });
  try {
    app.repo.setPermission('alice', 'write');
    app.repo.setPermission('trina', 'triage');
    const pr = app.repo.openPullRequest({ title: 'Add a widget', user: 'bob' });
    expect(pr).toBe(1);
    app.repo.addLabel(pr, 'merge-queue', 'alice');
    app.fake.webhooks.drop();
    app.repo.removeLabel(pr, 'merge-queue', 'trina');
    const [removal] = app.fake.webhooks.drop();
    await app.probot.receive({ id: 'd-removal', name: 'pull_request', payload: removal!.payload } as Parameters<typeof app.probot.receive>[0]);
    expect(app.repo.pullRequest(pr).labels).toEqual(['merge-queue']);
    expect(app.repo.comments(pr).map((c) => c.body)).toEqual([expect.stringContaining('@trina, only people with write access to this repository can remove pull requests with the `merge-queue` label; the label is back, and nothing changed in the queue.')]);
    // The App putting it back is a label event of its own: handled, it queues nothing and says nothing.
    const own = app.fake.webhooks.drop().filter((e) => e.event === 'pull_request');
    expect(own.map((e) => (e.payload as { action: string }).action)).toEqual(['labeled']);
    for (const event of own) await app.probot.receive({ id: 'd-own', name: event.event, payload: event.payload } as Parameters<typeof app.probot.receive>[0]);
    expect(app.calls).toEqual([]);
    expect(app.repo.comments(pr)).toHaveLength(1);
  } finally {
    await app.fake.close();
  }
});

test('triage taking the label off a PR the queue does not hold, or putting it on one it holds: nothing changes, nothing is said', async () => {
  const app = await appOnFakeGitHub({ queued: [2] });
  try {
    app.repo.setPermission('trina', 'triage');
    const loose = app.repo.openPullRequest({ title: 'Not queued', user: 'bob' });
    const queued = app.repo.openPullRequest({ title: 'Queued', user: 'bob' });
    expect(queued).toBe(2);
    app.repo.addLabel(loose, 'merge-queue', 'bob');
    await handled(app, ['pull_request'], () => app.repo.removeLabel(loose, 'merge-queue', 'trina'));
    await handled(app, ['pull_request'], () => app.repo.addLabel(queued, 'merge-queue', 'trina'));
    expect(app.calls).toEqual([]);
    expect(app.repo.comments(loose)).toEqual([]);
    expect(app.repo.comments(queued)).toEqual([]);
    expect(app.repo.pullRequest(loose).labels).toEqual([]);
  } finally {
    await app.fake.close();
  }
});

// Found by review of the restore: a bot that takes the label off whenever it is put on would fight the App for ever, and
// a removal handled late (a retried delivery) must not undo what someone did to the PR since.
test('the label is not put back after a bot took it off, nor when the PR changed after the removal', async () => {
  let at = Date.parse('2026-11-29T10:00:00Z');
  const app = await appOnFakeGitHub({ queued: [1, 2], now: () => new Date(at) });
  try {
    app.repo.setPermission('trina', 'triage');
    const botted = app.repo.openPullRequest({ title: 'Labelled', user: 'bob', labels: ['merge-queue'] });
    const late = app.repo.openPullRequest({ title: 'Labelled too', user: 'bob', labels: ['merge-queue'] });
    await handled(app, ['pull_request'], () => app.repo.removeLabel(botted, 'merge-queue', 'label-police[bot]'));
    expect(app.repo.pullRequest(botted).labels).toEqual([]);
    expect(app.repo.comments(botted).map((c) => c.body)).toEqual([expect.stringMatching(/@label-police\[bot\], only people with write access .* label; nothing changed in the queue\./)]);

    app.fake.webhooks.drop();
    app.repo.removeLabel(late, 'merge-queue', 'trina');
    const [removal] = app.fake.webhooks.drop();
    at += 5_000;
    app.repo.editPullRequest(late, { title: 'Edited since' }, 'bob');
    await app.probot.receive({ id: 'd-late', name: 'pull_request', payload: removal!.payload } as Parameters<typeof app.probot.receive>[0]);
    expect(app.repo.pullRequest(late).labels).toEqual([]);
    expect(app.repo.comments(late).map((c) => c.body)).toEqual([expect.not.stringContaining('the label is back')]);
    expect(app.calls).toEqual([]);
  } finally {
    await app.fake.close();
  }
});
