/**
 * The runner decides in place on its copy of the engine state: a decision the
 * database failed to store must not survive in that copy, or the inputs,
 * applied again on the next round, find their work done and nothing is ever
 * recorded or carried out (a PR stuck, the engine and the database apart).
 */
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { waitFor } from '../support/wait-for.js';

let h: ApiHarness;
let token: string;
/** Decisions whose storing fails, from now on. */
let failAppends = 0;

beforeAll(async () => {
  h = await startApiHarness({ prefix: 'decision_store', sandboxTimeScale: 0.02 });
  token = await h.tokenFor('demo', 'sandbox');
  const engine = h.stores.engine as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const append = engine.append!.bind(engine);
  engine.append = async (...args: unknown[]) => {
    if (failAppends > 0) {
      failAppends--;
      throw new Error('connection reset while storing the decision');
    }
    return append(...args);
  };
});
afterAll(() => h.close());

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body, token);
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

test('a decision the database failed to store is decided again from the log: the PR still merges, its timeline complete', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'flaky-store' };
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 5 });
  expect((await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } })).state).toBe('TESTING');
  // The run's result arrives while the database refuses the next two decisions.
  failAppends = 2;
  const merged = await waitFor(
    () => ok('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: 1 }, includeTimeline: true }),
    (pr) => pr.state === 'MERGED',
    15_000,
  );
  expect(failAppends).toBe(0);
  expect((merged.timeline as Array<{ state: string }>).map((t) => t.state).reverse()).toEqual(['NOT_READY', 'PENDING', 'TESTING', 'TESTS_PASSED', 'MERGED']);
});
