import { startApiHarness, type ApiHarness } from '../support/api-harness.js';

/** Probot's convention: GET /ping answers PONG, for monitors set up for a Probot app. */

let h: ApiHarness;

beforeAll(async () => {
  h = await startApiHarness({ prefix: 'ping' });
});

afterAll(async () => {
  await h.close();
});

test('GET /ping is 200 PONG in plain text, without a token', async () => {
  const res = await h.app.inject({ method: 'GET', url: '/ping' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  expect(res.body).toBe('PONG');
});

test('HEAD /ping answers too, and /ping is not in the API document', async () => {
  expect((await h.app.inject({ method: 'HEAD', url: '/ping' })).statusCode).toBe(200);
  const doc = await h.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  expect(Object.keys(doc.json<{ paths: Record<string, unknown> }>().paths)).not.toContain('/ping');
});

test('a wrong token or a session cookie changes nothing: /ping never authenticates', async () => {
  const res = await h.app.inject({ method: 'GET', url: '/ping', headers: { 'x-api-token': 'mq_wrong', cookie: 'mq_session=nope' } });
  expect(res.statusCode).toBe(200);
  expect(res.body).toBe('PONG');
});

test('GET /schemas/merge-queue.schema.json serves the queue file schema to editors, without a token', async () => {
  const res = await h.app.inject({ method: 'GET', url: '/schemas/merge-queue.schema.json' });
  expect(res.statusCode).toBe(200);
  const schema = res.json<{ $schema: string; properties: { queues: { additionalProperties: unknown } } }>();
  expect(schema.$schema).toMatch(/json-schema\.org/);
  expect(JSON.stringify(schema.properties.queues.additionalProperties)).toContain('retryFailedTests');
});
