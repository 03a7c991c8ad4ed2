/**
 * deleteQueue while a submit is in flight. A submission is in the queue from its claim on (it is answered 200 and
 * must not be lost): a claim not decided yet makes the deletion a 409 naming it, and a submit that read the queue
 * just before it was deleted (the read is up to a second old) is answered 404, not 200 for a queue that is gone.
 */
import type { Stores } from '../../src/ports/stores.js';
import { repo, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { submission } from '../runner/support/runner-fixture.js';

let h: ApiHarness;
let token: string;

beforeAll(async () => {
  h = await startApiHarness({ prefix: 'delete_submissions' });
  token = await h.tokenFor('acme');
});
afterAll(() => h.close());

let counter = 0;
const freshBranch = () => `del-submit-${++counter}`;

/** The next claim waits for `release` at `when` ('before' the claim is written, or 'after' it); `reached` settles there. */
function holdNextClaim(when: 'before' | 'after') {
  const entries = h.stores.entries as { claim: Stores['entries']['claim'] };
  const claim = entries.claim;
  let release!: () => void;
  let reachedIt!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<void>((resolve) => (reachedIt = resolve));
  entries.claim = async (entry) => {
    entries.claim = claim;
    if (when === 'before') {
      reachedIt();
      await released;
    }
    const claimed = await claim(entry);
    if (when === 'after') {
      reachedIt();
      await released;
    }
    return claimed;
  };
  return { reached, release };
}

const post = (path: string, targetBranch: string, extra: Record<string, unknown> = {}) => h.post(path, { repo: repo(), targetBranch, ...extra }, token);

test('a submission claimed and not decided yet makes deleteQueue a 409 naming it; the submit is answered and its PR stays queued', async () => {
  const targetBranch = freshBranch();
  expect((await post('/v1/createQueue', targetBranch)).statusCode).toBe(200);
  const held = holdNextClaim('after');
  const submitting = post('/v1/submitPullRequest', targetBranch, { pr: { number: 5 } });
  await held.reached;

  const refused = await post('/v1/deleteQueue', targetBranch);
  expect(refused.statusCode).toBe(409);
  expect(refused.body).toMatch(/#5/);

  held.release();
  const submitted = await submitting;
  expect(submitted.statusCode).toBe(200);
  const queue = (await post('/v1/getQueue', targetBranch)).json() as { enqueuedPullRequests: Array<{ prNumber: number }> };
  expect(queue.enqueuedPullRequests.map((pr) => pr.prNumber)).toEqual([5]);
  // Cancelled, the queue can go.
  expect((await post('/v1/cancelPullRequest', targetBranch, { pr: { number: 5 } })).statusCode).toBe(200);
  expect((await post('/v1/deleteQueue', targetBranch)).statusCode).toBe(200);
});

test('a submit that read the queue before it was deleted is a 404, not a 200 for a queue that is gone', async () => {
  const targetBranch = freshBranch();
  expect((await post('/v1/createQueue', targetBranch)).statusCode).toBe(200);
  const held = holdNextClaim('before');
  const submitting = post('/v1/submitPullRequest', targetBranch, { pr: { number: 6 } });
  await held.reached;

  expect((await post('/v1/deleteQueue', targetBranch)).statusCode).toBe(200);
  held.release();
  const submitted = await submitting;
  expect(submitted.statusCode).toBe(404);
  expect(submitted.body).toMatch(/No queue exists/);
  // A queue created again for the branch holds nothing of it.
  expect((await post('/v1/createQueue', targetBranch)).statusCode).toBe(200);
  const queue = (await post('/v1/getQueue', targetBranch)).json() as { enqueuedPullRequests: unknown[] };
  expect(queue.enqueuedPullRequests).toEqual([]);
});

test('a submission never decided (its request failed after the claim) names itself in the 409, and a cancel lets the queue go', async () => {
  const targetBranch = freshBranch();
  const created = (await post('/v1/createQueue', targetBranch)).json() as { id: string };
  const claimed = await h.stores.entries.claim(submission(created.id, 7, new Date(), null));
  expect(claimed.ok).toBe(true);
  const refused = await post('/v1/deleteQueue', targetBranch);
  expect(refused.statusCode).toBe(409);
  expect(refused.body).toMatch(/#7/);
  expect((await post('/v1/cancelPullRequest', targetBranch, { pr: { number: 7 } })).statusCode).toBe(200);
  expect((await post('/v1/deleteQueue', targetBranch)).statusCode).toBe(200);
});

// Found by review: a new attempt of an ended PR claims nothing (its key names its entry), so only its input tells of it.
test('a new attempt of an ended PR waiting in the inbox (sent to another replica, or its round failed) makes deleteQueue a 409 naming it', async () => {
  const targetBranch = freshBranch();
  const created = (await post('/v1/createQueue', targetBranch)).json() as { id: string };
  expect((await post('/v1/submitPullRequest', targetBranch, { pr: { number: 9 } })).statusCode).toBe(200);
  const cancelled = (await post('/v1/cancelPullRequest', targetBranch, { pr: { number: 9 } })).json() as { id: string; state: string };
  expect(cancelled.state).toBe('CANCELLED');
  const submitted = { type: 'submitted' as const, entryId: cancelled.id, prNumber: 9, priority: 100, noBatch: false, facts: null, targets: null };
  await h.stores.engine.enqueue(created.id, { queueId: created.id, input: { type: 'resubmitted', attempt: 2, submitted }, at: Date.now() });

  const refused = await post('/v1/deleteQueue', targetBranch);
  expect(refused.statusCode).toBe(409);
  expect(refused.body).toMatch(/waiting for a decision \(#9\)/);
});
