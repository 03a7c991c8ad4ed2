/**
 * Issue 12 through the API: new queues are adaptive (`tuning`), a tuned setting
 * fixes the tuning, and `riskHint` on submit reaches the engine (a risky PR is
 * left out of the batch the safer PRs behind it join).
 */
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { waitFor } from '../support/wait-for.js';
import { queueFileSchema } from '../../src/queue-file/queue-file-schema.js';

let h: ApiHarness;
let token: string;
beforeAll(async () => {
  // Sandbox CI slowed down enough that the first run is still going while we look.
  h = await startApiHarness({ prefix: 'tuning_risk', sandboxTimeScale: 1 });
  token = await h.tokenFor('demo', 'sandbox');
});
afterAll(() => h.close());

let repoCounter = 0;
async function queue() {
  const repo = { host: 'sandbox', owner: 'demo', name: `tuning${++repoCounter}` };
  expect((await h.post('/v1/createQueue', { repo, targetBranch: 'main' }, token)).statusCode).toBe(200);
  return repo;
}

test('a new queue is adaptive; setting a batching knob fixes the tuning; tuning can be named back', async () => {
  const repo = await queue();
  expect((await h.post('/v1/getQueue', { repo, targetBranch: 'main' }, token)).json().tuning).toBe('adaptive');
  const fixed = await h.post('/v1/updateQueue', { repo, targetBranch: 'main', batch: true, batchingMinSize: 2 }, token);
  expect(fixed.json()).toMatchObject({ tuning: 'fixed', batch: true, batchingMinSize: 2 });
  const back = await h.post('/v1/updateQueue', { repo, targetBranch: 'main', tuning: 'ADAPTIVE' }, token);
  expect(back.json()).toMatchObject({ tuning: 'adaptive', batch: true });
  const bad = await h.post('/v1/updateQueue', { repo, targetBranch: 'main', tuning: 'clever' }, token);
  expect(bad.statusCode).toBe(400);
  expect(bad.body).toMatch(/tuning/);
});

// Found by review: the setting was stored and shown, and never used.
test('tuning "adaptive" with a setting it chooses itself is a 400 naming the setting, and nothing changes; the queue file says the same', async () => {
  const repo = await queue();
  const res = await h.post('/v1/updateQueue', { repo, targetBranch: 'main', tuning: 'adaptive', batchingMinSize: 3, concurrency: 4 }, token);
  expect(res.statusCode).toBe(400);
  expect(res.body).toMatch(/batchingMinSize.*tuning "adaptive"/);
  expect((await h.post('/v1/getQueue', { repo, targetBranch: 'main' }, token)).json()).toMatchObject({ tuning: 'adaptive', batchingMinSize: 1, concurrency: 1 });
  const file = queueFileSchema.safeParse({ queues: { main: { tuning: 'adaptive', batch: true } } });
  expect(file.success ? [] : file.error.issues.map((issue) => issue.path.join('.'))).toEqual(['queues.main.batch']);
});

test('riskHint must be a probability', async () => {
  const repo = await queue();
  for (const riskHint of [1.5, -0.1, 'high']) {
    const res = await h.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 }, riskHint }, token);
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/riskHint/);
  }
});

test('a risky PR stays out of the batch the safer PR behind it joins', async () => {
  const repo = await queue();
  await h.post('/v1/updateQueue', { repo, targetBranch: 'main', state: 'PAUSED' }, token);
  const submit = (number: number, riskHint?: number) => h.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number }, ...(riskHint === undefined ? {} : { riskHint }) }, token);
  expect((await submit(1)).statusCode).toBe(200);
  expect((await submit(2, 0.9)).statusCode).toBe(200);
  expect((await submit(3, 0.02)).statusCode).toBe(200);
  await h.post('/v1/updateQueue', { repo, targetBranch: 'main', state: 'RUNNING' }, token);
  const state = async (number: number) => (await h.post('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number } }, token)).json().state as string;
  await waitFor(() => state(3), (s) => s === 'TESTING');
  expect(await state(1)).toBe('TESTING');
  expect(await state(2)).toBe('PENDING');
});
