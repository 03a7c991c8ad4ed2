/**
 * Label deliveries arrive late, twice or out of order: the handler acts on the
 * PR's labels as GitHub has them now, not on the event's action. Probot's
 * handlers against the fake GitHub, given deliveries in the order they are handled.
 */
import type { Probot } from 'probot';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import type { BuiltEvent, FakeGitHub, FakeRepo } from '../support/fake-github/index.js';
import { appOnFakeGitHub } from './app-on-fake.js';
const LABEL = DEFAULT_QUEUE_CONFIG.enqueueingLabel;

let fake: FakeGitHub;
let repo: FakeRepo;
let probot: Probot;
let calls: string[];
/** The head each submit named. */
let submittedHeads: Array<string | undefined>;
/** What each submit asked for besides the PR. */
let submits: Array<Record<string, unknown>>;
let deliveries = 0;

beforeEach(async () => {
  // No webhook target: events collect in `pending`, handled below in the order a test chooses.
  ({ fake, repo, probot, calls, submittedHeads, submits } = await appOnFakeGitHub({ defaultPermission: 'write' }));
});

afterEach(async () => {
  await fake.close();
});

/** The label events GitHub built, in the order they happened. */
function labelEvents(): BuiltEvent[] {
  return fake.webhooks.drop().filter((e) => e.event === 'pull_request' && (e.action === 'labeled' || e.action === 'unlabeled'));
}

async function handle(e: BuiltEvent): Promise<void> {
  await probot.receive({ id: `delivery-${++deliveries}`, name: e.event, payload: e.payload } as Parameters<Probot['receive']>[0]);
}

test('a labeled delivery handled after the label was removed (and after its unlabeled): submitted naming its label, with no read of the labels (the runner\'s read of the PR takes it out)', async () => {
  const pr = repo.openPullRequest({ title: 'Add a widget' });
  repo.addLabel(pr, LABEL, 'alice');
  repo.removeLabel(pr, LABEL, 'alice');
  const [labeled, unlabeled] = labelEvents();
  expect([labeled?.action, unlabeled?.action]).toEqual(['labeled', 'unlabeled']);
  // The labeled delivery failed at first (or came late): the unlabeled is handled before it.
  await handle(unlabeled!);
  await handle(labeled!);
  // Taken out by the unlabeled; the labeled submits, naming the label, so the PR's facts (read after every submission,
  // without it) take it out again: engine applyFacts (test/engine/label-submissions.test.ts) and the e2e in
  // test/e2e/github-landing.test.ts. Only the removal reads the labels: one request, not one per labelled PR.
  expect(calls).toEqual([`cancel #${pr}`, `submit #${pr}`]);
  expect(submits.at(-1)).toMatchObject({ label: LABEL });
  expect(fake.requestsTo('issues/list-labels-on-issue')).toHaveLength(1);
  fake.assertNoViolations();
});

test('an unlabeled delivery handled after the label was put back does not take the PR out; labeled with the label present queues it', async () => {
  const pr = repo.openPullRequest({ title: 'Add a widget' });
  repo.addLabel(pr, LABEL, 'alice');
  repo.removeLabel(pr, LABEL, 'alice');
  repo.addLabel(pr, LABEL, 'alice');
  const [first, unlabeled, again] = labelEvents();
  await handle(again!);
  await handle(unlabeled!);
  await handle(first!);
  // Both labeled deliveries submit (submitting a queued PR again is the service's no-op); the stale unlabeled does nothing.
  expect(calls).toEqual([`submit #${pr}`, `submit #${pr}`]);
  fake.assertNoViolations();
});

// Found by the security review: triage putting the label back before a writer's removal was handled kept the PR queued.
test('a writer\'s removal handled after someone without write access put the label back still takes the PR out (the events say who)', async () => {
  repo.setPermission('tom', 'triage');
  const pr = repo.openPullRequest({ title: 'Add a widget' });
  repo.addLabel(pr, LABEL, 'alice');
  repo.removeLabel(pr, LABEL, 'alice');
  repo.addLabel(pr, LABEL, 'tom');
  const [first, unlabeled, putBack] = labelEvents();
  await handle(first!);
  await handle(unlabeled!);
  expect(calls).toEqual([`submit #${pr}`, `cancel #${pr}`]);
  expect(fake.requestsTo('issues/list-events')).toHaveLength(1);
  // tom's own label is refused when handled (the PR is no longer queued).
  await handle(putBack!);
  expect(calls).toEqual([`submit #${pr}`, `cancel #${pr}`]);
  expect(repo.comments(pr).map((c) => c.body)).toEqual([expect.stringContaining('@tom, only people with write access to this repository can queue')]);
  fake.assertNoViolations();
});

test('a writer\'s stale removal, the label since put on by a writer, taken off by triage and put back by the App: the App\'s own label is passed over and the PR stays', async () => {
  const app = await appOnFakeGitHub({ defaultPermission: 'read', queued: [1] });
  try {
    app.repo.setPermission('alice', 'write');
    app.repo.setPermission('tom', 'triage');
    const pr = app.repo.openPullRequest({ title: 'Add a widget' });
    expect(pr).toBe(1);
    app.fake.webhooks.drop();
    app.repo.addLabel(pr, LABEL, 'alice');
    app.repo.removeLabel(pr, LABEL, 'alice');
    app.repo.addLabel(pr, LABEL, 'alice');
    app.repo.removeLabel(pr, LABEL, 'tom');
    const events = app.fake.webhooks.drop().filter((e) => e.event === 'pull_request');
    const [, staleRemoval, , tomsRemoval] = events;
    const receive = (e: BuiltEvent, id: string) => app.probot.receive({ id, name: e.event, payload: e.payload } as Parameters<Probot['receive']>[0]);
    await receive(tomsRemoval!, 'toms'); // put back by the App, with a reply
    expect(app.repo.pullRequest(pr).labels).toContain(LABEL);
    await receive(staleRemoval!, 'stale'); // alice's first removal, handled late
    expect(app.calls.filter((c) => c.startsWith('cancel'))).toEqual([]);
    app.fake.assertNoViolations();
  } finally {
    await app.fake.close();
  }
});

test('an unlabeled delivery with the label gone takes the PR out', async () => {
  const pr = repo.openPullRequest({ title: 'Add a widget' });
  repo.addLabel(pr, LABEL, 'alice');
  repo.removeLabel(pr, LABEL, 'alice');
  const [labeled, unlabeled] = labelEvents();
  await handle(labeled!);
  await handle(unlabeled!);
  // The labeled one submits (its label named, so its facts would take it out too), the unlabeled one cancels.
  expect(calls).toEqual([`submit #${pr}`, `cancel #${pr}`]);
  fake.assertNoViolations();
});

test('a label submits the head it was put on, even when the PR was pushed to before the delivery is handled (the push then cancels it)', async () => {
  const pr = repo.openPullRequest({ title: 'Add a widget' });
  const labeledHead = repo.pullRequest(pr).headSha;
  repo.addLabel(pr, LABEL, 'alice');
  repo.pushToPullRequest(pr);
  const [labeled] = labelEvents();
  await handle(labeled!);
  expect(calls).toEqual([`submit #${pr}`]);
  expect(submittedHeads).toEqual([labeledHead]);
  expect(repo.pullRequest(pr).headSha).not.toBe(labeledHead);
  fake.assertNoViolations();
});
