/**
 * Real CI clients send integers as JSON strings of digits ("12"): accepted
 * wherever an integer is expected; anything else is still a plain-text 400
 * naming the field.
 */
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';

let h: ApiHarness;
let token: string;
beforeAll(async () => {
  h = await startApiHarness({ prefix: 'int_strings', sandboxTimeScale: 0.02 });
  token = await h.tokenFor('demo', 'sandbox');
});
afterAll(() => h.close());

let repoCounter = 0;
async function queue() {
  const repo = { host: 'sandbox', owner: 'demo', name: `ints${++repoCounter}` };
  expect((await h.post('/v1/createQueue', { repo, targetBranch: 'main' }, token)).statusCode).toBe(200);
  await h.post('/v1/updateQueue', { repo, targetBranch: 'main', state: 'PAUSED' }, token);
  return repo;
}

test('"12" is accepted as pr.number, and the PR is shown with the number 12', async () => {
  const repo = await queue();
  const res = await h.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: '12' } }, token);
  expect(res.statusCode).toBe(200);
  expect(res.json().prNumber).toBe(12);
  const read = await h.post('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: '12' } }, token);
  expect(read.json()).toMatchObject({ prNumber: 12 });
});

test.each([
  ['"12a"', '12a', /Field 'pr\.number' must be a number/],
  ['1.5', 1.5, /Field 'pr\.number' must be an integer/],
  ['"1.5"', '1.5', /Field 'pr\.number' must be an integer/],
  ['-1', -1, /Field 'pr\.number' must be at least 1/],
  ['"-1"', '-1', /Field 'pr\.number' must be at least 1/],
  ['""', '', /Field 'pr\.number' must be a number/],
  ['" 12"', ' 12', /Field 'pr\.number' must be a number/],
  ['"0x10"', '0x10', /Field 'pr\.number' must be a number/],
  ['"99999999999"', '99999999999', /Field 'pr\.number' must be at most 2147483647/],
])('pr.number %s is refused with a 400 naming the field', async (_label, number, message) => {
  const repo = await queue();
  const res = await h.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number } }, token);
  expect(res.statusCode).toBe(400);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  expect(res.body).toMatch(message);
});

test('priority and take accept strings of digits too, and refuse anything else naming the field', async () => {
  const repo = await queue();
  const submitted = await h.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 3 }, priority: '10' }, token);
  expect(submitted.statusCode).toBe(200);
  expect(submitted.json()).toMatchObject({ priorityValue: 10, priorityName: 'high' });
  const bad = await h.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 4 }, priority: '10a' }, token);
  expect(bad.statusCode).toBe(400);
  expect(bad.body).toMatch(/'priority'/);

  const listed = await h.post('/v1/listPullRequests', { repo, targetBranch: 'main', take: '1' }, token);
  expect(listed.statusCode).toBe(200);
  expect(listed.json().pullRequests).toHaveLength(1);
  for (const take of ['1.5', '0', 'x']) {
    const refused = await h.post('/v1/listPullRequests', { repo, targetBranch: 'main', take }, token);
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/Field 'take'/);
  }
});

test('queue settings accept strings of digits', async () => {
  const repo = await queue();
  const res = await h.post('/v1/updateQueue', { repo, targetBranch: 'main', concurrency: '3', batchingMaxWaitTimeMinutes: '0' }, token);
  expect(res.statusCode).toBe(200);
  expect(res.json()).toMatchObject({ concurrency: 3, batchingMaxWaitTimeMinutes: 0 });
  const refused = await h.post('/v1/updateQueue', { repo, targetBranch: 'main', concurrency: '3.5' }, token);
  expect(refused.statusCode).toBe(400);
  expect(refused.body).toMatch(/Field 'concurrency' must be an integer/);
});
