import { startApiHarness, repo, type ApiHarness } from '../support/api-harness.js';

let h: ApiHarness;
let token: string;
beforeAll(async () => {
  h = await startApiHarness({ prefix: 'smoke' });
  token = await h.tokenFor('acme');
});
afterAll(() => h.close());

test('smoke', async () => {
  const r1 = await h.post('/v1/createQueue', { repo: repo(), targetBranch: 'main', mode: 'PARALLEL' }, token);
  console.error(r1.statusCode, r1.headers['content-type'], r1.body);
  const r2 = await h.post('/v1/submitPullRequest', { repo: repo(), targetBranch: 'main', pr: { number: 5 }, priority: 'high' }, token);
  console.error(r2.statusCode, r2.body);
  const r3 = await h.post('/v1/getQueue', { repo: repo(), targetBranch: 'main' }, token);
  console.error(r3.statusCode, r3.body);
  const r4 = await h.post('/v1/getQueue', { repo: { host: 'github.com', owner: 'x' }, targetBranch: 'main' }, token);
  console.error(r4.statusCode, r4.headers['content-type'], r4.body);
  const r5 = await h.app.inject({ method: 'GET', url: '/v1/getMergeQueueMetrics', headers: { 'x-api-token': token } });
  console.error(r5.statusCode, r5.headers['content-type'], r5.body.slice(0, 600));
  const r6 = await h.app.inject({ method: 'POST', url: '/v1/getQueue', headers: { 'x-api-token': token, 'content-type': 'text/plain' }, payload: 'hi' });
  console.error(r6.statusCode, r6.body);
  const r7 = await h.app.inject({ method: 'POST', url: '/v1/getQueue', headers: { 'x-api-token': token }, payload: 'hi' });
  console.error(r7.statusCode, r7.body);
  const r8 = await h.app.inject({ method: 'POST', url: '/v1/getQueue', headers: { 'x-api-token': token, 'content-type': 'application/json' }, payload: '{bad' });
  console.error(r8.statusCode, r8.body);
  const r9 = await h.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  console.error(r9.statusCode, r9.body.slice(0, 300));
  expect(r1.statusCode).toBe(200);
});
