/**
 * A decision stored but not all recorded (the database failed part-way) is
 * recorded again when the next round reloads the queue from its log. If that
 * reload fails as well (a database blip seldom fails one call alone), the round
 * after must reload again: a runner that kept the half-loaded state went on
 * deciding without ever recording that decision (the engine TESTING, the entry
 * PENDING for good: seen in CI in github-queue and github-landing).
 */
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { waitFor } from '../support/wait-for.js';

let h: ApiHarness;
let token: string;
/** Records of a TESTING state that fail, from now on. */
let failTesting = 0;

beforeAll(async () => {
  h = await startApiHarness({ prefix: 'record_reload', sandboxTimeScale: 0.02 });
  token = await h.tokenFor('demo', 'sandbox');
  const entries = h.stores.entries as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const recordTransitions = entries.recordTransitions!.bind(entries);
  entries.recordTransitions = async (...args: unknown[]) => {
    if (failTesting > 0 && (args[0] as Array<{ event: { state?: string } }>).some((change) => change.event.state === 'TESTING')) {
      failTesting--;
      throw new Error('connection reset while recording the state');
    }
    return recordTransitions(...args);
  };
});
afterAll(() => h.close());

test('a decision whose record fails, and fails again while the queue is reloaded, is still recorded', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'flaky-record' };
  expect((await h.post('/v1/createQueue', { repo, targetBranch: 'main' }, token)).statusCode).toBe(200);
  // CI long enough that the PR is still TESTING when looked at.
  expect((await h.post('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 3_000 }, token)).statusCode).toBe(200);
  // The decision that starts the run fails to record TESTING, and so does the reload after it. Its input has
  // left the inbox by then: the next poll tries again anyway (not only the sweep of every queue, 10 s here).
  failTesting = 2;
  await h.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } }, token);
  const pr = await waitFor(
    async () => (await h.post('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: 1 }, includeTimeline: true }, token)).json(),
    (view) => view.state === 'TESTING',
    5_000,
  );
  expect(failTesting).toBe(0);
  expect((pr.timeline as Array<{ state: string }>).map((t) => t.state).reverse()).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
});
