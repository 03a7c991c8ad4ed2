/**
 * Through the service on the sandbox: the runner hands the engine each PR's
 * author and size with its facts, so a PR submitted without a risk hint gets a
 * risk from its author's and its size's recent outcomes in the queue (issue
 * 12, point 3).
 */
import { engineFacts } from '../../src/runner/engine-inputs.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { waitFor } from '../support/wait-for.js';

let h: ApiHarness;
let token: string;
beforeAll(async () => {
  h = await startApiHarness({ prefix: 'derived_risk', sandboxTimeScale: 0.01 });
  token = await h.tokenFor('demo', 'sandbox');
});
afterAll(() => h.close());

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body, token);
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

test("a PR without a hint is as risky as its author's record here says: a repeat offender's next PR above a careful author's", async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'authors' };
  const queue = await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  // Three failing PRs by one author, three passing ones by another, tested one at a time.
  for (const [n, author, outcome] of [[1, 'sloppy', 'fail'], [2, 'careful', 'pass'], [3, 'sloppy', 'fail'], [4, 'careful', 'pass'], [5, 'sloppy', 'fail'], [6, 'careful', 'pass']] as const) {
    await ok('/sandbox/updatePullRequest', { repo, pr: { number: n }, author, outcome, ciSeconds: 1 });
    await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: n } });
    await waitFor(() => ok('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: n } }), (pr) => pr.state === 'MERGED' || pr.state === 'FAILED');
  }
  await ok('/v1/updateQueue', { repo, targetBranch: 'main', state: 'PAUSED' });
  for (const [n, author] of [[7, 'sloppy'], [8, 'careful']] as const) {
    await ok('/sandbox/updatePullRequest', { repo, pr: { number: n }, author });
    await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: n } });
  }
  const state = await h.runner!.engineState(queue.id as string);
  const riskOf = (n: number) => state?.entries.find((e) => e.prNumber === n)?.risk;
  expect(riskOf(7)).toBeGreaterThanOrEqual(0.5);
  expect(riskOf(8)).toBeLessThan(0.25);
});

test('a PR without a hint is as risky as PRs its size were here: a big change above a small one, each by a new author', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'sizes' };
  const queue = await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  // Five big changes (three fail) and five small ones (all pass), each by an author seen once.
  for (let n = 1; n <= 10; n++) {
    const big = n % 2 === 1;
    await ok('/sandbox/updatePullRequest', { repo, pr: { number: n }, author: `author-${n}`, changedFiles: big ? 80 : 2, outcome: big && n <= 5 ? 'fail' : 'pass', ciSeconds: 1 });
    await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: n } });
    await waitFor(() => ok('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: n } }), (pr) => pr.state === 'MERGED' || pr.state === 'FAILED');
  }
  await ok('/v1/updateQueue', { repo, targetBranch: 'main', state: 'PAUSED' });
  for (const [n, files] of [[11, 120], [12, 3], [13, 120]] as const) {
    await ok('/sandbox/updatePullRequest', { repo, pr: { number: n }, author: `author-${n}`, ...(n === 13 ? {} : { changedFiles: files }) });
    await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: n } });
  }
  const state = await h.runner!.engineState(queue.id as string);
  const riskOf = (n: number) => state?.entries.find((e) => e.prNumber === n)?.risk;
  expect(riskOf(11)).toBeGreaterThan(0.3);
  expect(riskOf(12)).toBeLessThan(0.2);
  // A PR whose size is not known (nor its author): no risk of its own.
  expect(riskOf(13)).toBeUndefined();
});

test('a bad size is refused with a clear error and changes nothing', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'bad-size' };
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, changedFiles: 12, title: 'Before' });
  const before = await ok('/sandbox/getRepository', { repo });
  for (const changedFiles of [-3, 1.5, 'many']) {
    const res = await h.post('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, changedFiles, title: 'After' }, token);
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/changedFiles/);
  }
  expect(await ok('/sandbox/getRepository', { repo })).toEqual(before);
});

test('a size the host did not give as a count (a stored null, NaN) is no size, not the smallest class', () => {
  const read = { title: 't', author: 'a', headSha: 'h', baseBranch: 'main', open: true, draft: false, merged: false, mergeability: 'mergeable' as const, readAt: new Date() };
  expect(engineFacts({ ...read, changedFiles: 7 }).changedFiles).toBe(7);
  for (const changedFiles of [null, Number.NaN, -1, 2.5]) expect(engineFacts({ ...read, changedFiles: changedFiles as unknown as number })).not.toHaveProperty('changedFiles');
});
