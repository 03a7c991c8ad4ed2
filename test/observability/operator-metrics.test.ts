import { ServiceMetrics } from '../../src/observability/service-metrics.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';

const OPERATOR_TOKEN = 'operator-token-0123456789';
let h: ApiHarness;
let metrics: ServiceMetrics;
beforeAll(async () => {
  metrics = new ServiceMetrics({ processMetrics: false });
  h = await startApiHarness({ prefix: 'operator', sandboxTimeScale: 0.02, operator: { metrics, token: OPERATOR_TOKEN } });
});
afterAll(() => h.close());

async function scrape(authorization?: string) {
  return h.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
}

test('GET /metrics asks for the operator token', async () => {
  expect((await scrape()).statusCode).toBe(401);
  const wrong = await scrape('Bearer not-the-token');
  expect(wrong.statusCode).toBe(401);
  expect(wrong.headers['content-type']).toMatch(/^text\/plain/);
  expect((await scrape(`Bearer ${OPERATOR_TOKEN}`)).statusCode).toBe(200);
});

test('it shows HTTP latency by route and status, engine decisions and actions, and queue depth', async () => {
  const token = await h.tokenFor('ops', 'sandbox');
  const repo = { host: 'sandbox', owner: 'ops', name: 'r' };
  await h.post('/v1/createQueue', { repo, targetBranch: 'main' }, token);
  await h.post('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 600 }, token);
  await h.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } }, token);
  await h.post('/v1/getQueue', { repo: { ...repo, name: 'missing' }, targetBranch: 'main' }, token);

  const res = await scrape(`Bearer ${OPERATOR_TOKEN}`);
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  const text = res.body;
  expect(text).toMatch(/mq_http_request_duration_seconds_count\{method="POST",route="\/v1\/submitPullRequest",status="200"\} 1/);
  expect(text).toMatch(/mq_http_request_duration_seconds_count\{method="POST",route="\/v1\/getQueue",status="404"\} 1/);
  expect(text).toMatch(/mq_engine_decisions_total\{event="submitted"\} 1/);
  expect(text).toMatch(/mq_engine_actions_total\{action="start_run"\} 1/);
  expect(text).toMatch(/mq_queue_depth\{queue="sandbox\/ops\/r@main"\} 1/);
});

test('a deleted queue\'s per-queue gauges are gone from the scrape', async () => {
  const token = await h.tokenFor('gone', 'sandbox');
  const repo = { host: 'sandbox', owner: 'gone', name: 'r' };
  const created = (await h.post('/v1/createQueue', { repo, targetBranch: 'main' }, token)).json();
  await h.post('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 600 }, token);
  await h.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } }, token);
  const series = `mq_queue_stalled{queue="${created.id as string}"}`;
  const scraped = async () => (await scrape(`Bearer ${OPERATOR_TOKEN}`)).body;
  for (let i = 0; i < 50 && !(await scraped()).includes(series); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await scraped()).toContain(`${series} 0`);
  // A queue is deleted once nothing is in it.
  await h.post('/v1/cancelPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } }, token);
  let deleted = 0;
  for (let i = 0; i < 50 && deleted !== 200; i++) {
    deleted = (await h.post('/v1/deleteQueue', { repo, targetBranch: 'main' }, token)).statusCode;
    if (deleted !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(deleted).toBe(200);
  expect(await scraped()).not.toContain(series);
});
