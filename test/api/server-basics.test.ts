import type { LightMyRequestResponse } from 'fastify';
import { startApiHarness, repo, type ApiHarness } from '../support/api-harness.js';

/** Health, routing, body parsing and limits, request ids, 500s, and the OpenAPI document. */

let h: ApiHarness;
let token: string;

beforeAll(async () => {
  h = await startApiHarness({ prefix: 'server_basics' });
  token = await h.tokenFor('acme');
});

afterAll(async () => {
  await h.close();
});

const MiB = 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const V1_PATHS = [
  '/v1/submitPullRequest',
  '/v1/cancelPullRequest',
  '/v1/restartTestsOnPullRequest',
  '/v1/getSubmittedPullRequest',
  '/v1/setImpactedTargets',
  '/v1/getMergeQueueTestingDetails',
  '/v1/createQueue',
  '/v1/deleteQueue',
  '/v1/getQueue',
  '/v1/updateQueue',
  '/v1/listPullRequests',
  '/v1/getMergeQueueMetrics',
];
/** The dashboard's reads: v1 endpoints too, with the same token and organization rules. */
const DASHBOARD_PATHS = ['/v1/listQueues', '/v1/getQueueBoard', '/v1/getQueueHealth'];

function expectPlainError(res: LightMyRequestResponse, status: number, mentions?: RegExp): void {
  expect({ status: res.statusCode, type: res.headers['content-type'] }).toEqual({ status, type: 'text/plain; charset=utf-8' });
  expect(res.body.trim().length).toBeGreaterThan(3);
  expect(res.body).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
  if (mentions) expect(res.body).toMatch(mentions);
}

function post(url: string, payload: string | Buffer, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return h.app.inject({ method: 'POST', url, headers: { 'x-api-token': token, ...headers }, payload });
}

async function createQueue(targetBranch: string, r = repo()): Promise<void> {
  const res = await h.post('/v1/createQueue', { repo: r, targetBranch }, token);
  expect(res.statusCode).toBe(200);
}

describe('health', () => {
  test('GET /healthz is 200 without a token', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  test('GET /readyz is 200 while the database answers', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready' });
  });

  test('GET /readyz is 503 plain text when the database does not answer, 200 again when it does', async () => {
    const original = h.stores.ping;
    h.stores.ping = async () => false;
    try {
      const res = await h.app.inject({ method: 'GET', url: '/readyz' });
      expectPlainError(res, 503, /database/i);
      // Liveness does not depend on the database.
      expect((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      h.stores.ping = original;
    }
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  test('GET /readyz is a 503, not a 500, when ping itself throws', async () => {
    const original = h.stores.ping;
    h.stores.ping = async () => {
      throw new Error('connection reset');
    };
    try {
      const res = await h.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.body).not.toContain('connection reset');
    } finally {
      h.stores.ping = original;
    }
  });
});

describe('routing', () => {
  test.each([
    ['GET', '/nope'],
    ['POST', '/v1/noSuchEndpoint'],
    ['GET', '/v2/getQueue'],
    ['POST', '/getQueue'],
    ['GET', '/v1/createQueue'],
  ] as const)('%s %s is a 404 in plain text', async (method, url) => {
    const res = await h.app.inject({ method, url, headers: { 'x-api-token': token } });
    expectPlainError(res, 404);
  });

  // Fastify's own URL errors go through `frameworkErrors` to the same plain text.
  test.each(['/%E0%A4%A', '/v1/getQueue%zz'])('a URL that does not decode (%s) is a plain-text 400', async (url) => {
    const res = await h.app.inject({ method: 'POST', url, headers: { 'x-api-token': token, 'content-type': 'application/json' }, payload: '{}' });
    expectPlainError(res, 400);
  });

  test('the 404 body does not echo huge or hostile paths in full', async () => {
    const res = await h.app.inject({ method: 'GET', url: `/${'a'.repeat(5000)}` });
    expectPlainError(res, 404);
    expect(res.body.length).toBeLessThan(500);
  });
});

describe('request bodies', () => {
  test('content type text/plain is a 415', async () => {
    const res = await post('/v1/createQueue', JSON.stringify({ repo: repo(), targetBranch: 'main' }), { 'content-type': 'text/plain' });
    expectPlainError(res, 415, /application\/json/);
  });

  test.each(['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml'])('content type %s is a 415', async (type) => {
    const res = await post('/v1/getQueue', 'a=b', { 'content-type': type });
    expectPlainError(res, 415);
  });

  test('a body without any content type is a 415', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/getQueue', headers: { 'x-api-token': token }, payload: Buffer.from('{}') });
    expectPlainError(res, 415);
  });

  test('application/json with a charset parameter is accepted', async () => {
    await createQueue('charset-ok');
    const res = await post('/v1/getQueue', JSON.stringify({ repo: repo(), targetBranch: 'charset-ok' }), {
      'content-type': 'application/json; charset=utf-8',
    });
    expect(res.statusCode).toBe(200);
  });

  test.each([
    ['truncated JSON', '{"repo": {"host": "github.com"'],
    ['a trailing comma', '{"targetBranch": "main",}'],
    ['single quotes', "{'targetBranch': 'main'}"],
    ['plain words', 'hello'],
  ])('invalid JSON (%s) is a 400', async (_what, payload) => {
    const res = await post('/v1/createQueue', payload, { 'content-type': 'application/json' });
    expectPlainError(res, 400, /JSON/);
  });

  test('an empty JSON body is a 400', async () => {
    expectPlainError(await post('/v1/createQueue', '', { 'content-type': 'application/json' }), 400);
  });

  test.each([
    ['an array', '[]'],
    ['a string', '"main"'],
    ['null', 'null'],
    ['a number', '42'],
  ])('a JSON body that is %s is a 400 asking for an object', async (_what, payload) => {
    expectPlainError(await post('/v1/createQueue', payload, { 'content-type': 'application/json' }), 400, /object|required/);
  });

  test('__proto__ in a body is dropped like any unknown field, never merged into objects', async () => {
    const payload = '{"repo": {"host": "github.com", "owner": "acme", "name": "widgets", "__proto__": {"x": 1}}, "targetBranch": "proto", "__proto__": {"polluted": true}}';
    const res = await post('/v1/createQueue', payload, { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(200);
    expect(res.json().polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  // Found by review: Fastify sets no limit by default, so a caller dripping a body held its socket (and memory) for good.
  test('a request must arrive whole within a minute (Node closes one that does not)', () => {
    expect(h.app.server.requestTimeout).toBe(60_000);
  });

  test('a body over 20 MiB is a 413 naming the limit', async () => {
    await createQueue('too-big');
    const payload = JSON.stringify({ repo: repo(), targetBranch: 'too-big', pr: { number: 1, sha: 'abc1234abc1234abc1234abc1234abc1234abc12' }, impactedTargets: ['x'.repeat(20 * MiB)] });
    expect(payload.length).toBeGreaterThan(20 * MiB);
    const res = await post('/v1/setImpactedTargets', payload, { 'content-type': 'application/json' });
    expectPlainError(res, 413, /20 MiB|20971520/);
  });

  test('a body of exactly 20 MiB + 1 byte is a 413, exactly 20 MiB is parsed', async () => {
    const base = JSON.stringify({ repo: repo(), targetBranch: 'edge', pad: '' });
    const fill = (size: number) => base.replace('"pad":""', `"pad":"${'p'.repeat(size - base.length)}"`);
    const over = fill(20 * MiB + 1);
    expect(Buffer.byteLength(over)).toBe(20 * MiB + 1);
    expectPlainError(await post('/v1/getQueue', over, { 'content-type': 'application/json' }), 413);
    const exact = fill(20 * MiB);
    expect(Buffer.byteLength(exact)).toBe(20 * MiB);
    // Parsed and validated: the queue does not exist, so a 404, not a 413.
    expectPlainError(await post('/v1/getQueue', exact, { 'content-type': 'application/json' }), 404);
  });

  test('setImpactedTargets with ~19.5 MiB of targets is accepted, and getSubmittedPullRequest returns the full list', async () => {
    const targetBranch = 'big-targets';
    await createQueue(targetBranch);
    const targets: string[] = [];
    let bytes = 0;
    for (let i = 0; bytes < 19.5 * MiB; i++) {
      const target = `//services/component-${i.toString().padStart(7, '0')}/${'module/'.repeat(12)}target:${i}`;
      targets.push(target);
      bytes += target.length + 3;
    }
    const payload = JSON.stringify({ repo: repo(), targetBranch, pr: { number: 77, sha: 'ABCDEF0123ABCDEF0123ABCDEF0123ABCDEF0123' }, impactedTargets: targets });
    expect(payload.length).toBeGreaterThan(19 * MiB);
    expect(payload.length).toBeLessThan(20 * MiB);

    const set = await post('/v1/setImpactedTargets', payload, { 'content-type': 'application/json' });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toEqual({ prNumber: 77, sha: 'abcdef0123abcdef0123abcdef0123abcdef0123', impactedTargets: { count: targets.length }, isCurrentlySubmittedToQueue: false });

    expect((await h.post('/v1/submitPullRequest', { repo: repo(), targetBranch, pr: { number: 77 } }, token)).statusCode).toBe(200);
    const read = await h.post('/v1/getSubmittedPullRequest', { repo: repo(), targetBranch, pr: { number: 77 } }, token);
    expect(read.statusCode).toBe(200);
    const view = read.json<{ impactedTargets: string[]; readiness: { hasImpactedTargets: boolean } }>();
    expect(view.readiness.hasImpactedTargets).toBe(true);
    expect(view.impactedTargets).toHaveLength(targets.length);
    expect(view.impactedTargets).toEqual(targets);
  }, 120_000);
});

describe('request ids', () => {
  test('a given x-request-id is kept and echoed', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-abc.123:9' } });
    expect(res.headers['x-request-id']).toBe('trace-abc.123:9');
  });

  test('without one, a fresh id is generated per request and echoed', async () => {
    const a = await h.app.inject({ method: 'GET', url: '/healthz' });
    const b = await h.app.inject({ method: 'GET', url: '/healthz' });
    expect(a.headers['x-request-id']).toMatch(UUID);
    expect(b.headers['x-request-id']).toMatch(UUID);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });

  test.each([
    ['too long', 'x'.repeat(65)],
    ['with spaces', 'a b'],
    ['with a newline-like payload', 'abc%0d%0aSet-Cookie:x'],
    ['empty', ''],
  ])('an unusable x-request-id (%s) is replaced by a generated one', async (_what, given) => {
    const res = await h.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': given } });
    expect(res.headers['x-request-id']).toMatch(UUID);
  });

  test('error responses carry the request id too (401, 404, 400)', async () => {
    for (const [method, url, headers] of [
      ['POST', '/v1/getQueue', {}],
      ['GET', '/nope', {}],
      ['POST', '/v1/getQueue', { 'x-api-token': token, 'content-type': 'application/json' }],
    ] as const) {
      const res = await h.app.inject({ method, url, headers: { ...headers, 'x-request-id': 'err-id-1' }, ...(method === 'POST' ? { payload: '{' } : {}) });
      expect([url, res.headers['x-request-id']]).toEqual([url, 'err-id-1']);
    }
  });
});

describe('500', () => {
  test('an unexpected store failure is a 500 in plain text quoting the request id, without the error or a stack', async () => {
    await createQueue('boom');
    const original = h.stores.queues.find;
    h.stores.queues.find = async () => {
      throw new Error('secret connection string mongodb://user:pass@db');
    };
    try {
      const given = await h.app.inject({
        method: 'POST',
        url: '/v1/getQueue',
        headers: { 'x-api-token': token, 'content-type': 'application/json', 'x-request-id': 'req-500-given' },
        payload: JSON.stringify({ repo: repo(), targetBranch: 'boom' }),
      });
      expectPlainError(given, 500, /req-500-given/);
      expect(given.headers['x-request-id']).toBe('req-500-given');
      expect(given.body).not.toMatch(/secret|mongodb:|Error:/);

      const generated = await h.post('/v1/getQueue', { repo: repo(), targetBranch: 'boom' }, token);
      expectPlainError(generated, 500);
      const id = generated.headers['x-request-id'] as string;
      expect(id).toMatch(UUID);
      expect(generated.body).toContain(id);
    } finally {
      h.stores.queues.find = original;
    }
    expect((await h.post('/v1/getQueue', { repo: repo(), targetBranch: 'boom' }, token)).statusCode).toBe(200);
  });

  test('a failure while authenticating is a 500, not a 401 and not a hang', async () => {
    const original = h.stores.tokens.findActiveByHash;
    h.stores.tokens.findActiveByHash = async () => {
      throw new Error('db down');
    };
    try {
      const res = await h.post('/v1/getQueue', { repo: repo(), targetBranch: 'boom' }, token);
      expectPlainError(res, 500, /request id/);
    } finally {
      h.stores.tokens.findActiveByHash = original;
    }
  });

  test('a failure inside the metrics endpoint is a plain-text 500 as well', async () => {
    const original = h.stores.queues.listForOrg;
    h.stores.queues.listForOrg = async () => {
      throw new Error('nope');
    };
    try {
      const res = await h.app.inject({ method: 'GET', url: '/v1/getMergeQueueMetrics', headers: { 'x-api-token': token } });
      expectPlainError(res, 500);
    } finally {
      h.stores.queues.listForOrg = original;
    }
  });
});

describe('OpenAPI and docs', () => {
  let doc: {
    openapi: string;
    info: { version: string; title: string };
    paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: unknown; responses?: Record<string, unknown> }>>;
    components: { securitySchemes: Record<string, { type: string; in: string; name: string }> };
    security?: Record<string, string[]>[];
  };

  beforeAll(async () => {
    const res = await h.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.json();
  });

  test('is an OpenAPI 3 document of version 1.0.0', () => {
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.info.title.length).toBeGreaterThan(0);
  });

  test("lists exactly the 12 endpoints under /v1 and the dashboard's 3 reads, with their methods", () => {
    expect(Object.keys(doc.paths).sort()).toEqual([...V1_PATHS, ...DASHBOARD_PATHS].sort());
    for (const path of [...V1_PATHS, ...DASHBOARD_PATHS]) {
      const methods = Object.keys(doc.paths[path] ?? {});
      expect([path, methods]).toEqual([path, [path.endsWith('Metrics') ? 'get' : 'post']]);
    }
  });

  test('POST endpoints document a JSON request body; metrics documents repo and repoHost query parameters', () => {
    for (const path of V1_PATHS.filter((p) => !p.endsWith('Metrics'))) {
      expect([path, JSON.stringify(doc.paths[path]?.post?.requestBody)]).toEqual([path, expect.stringContaining('application/json')]);
    }
    const params = doc.paths['/v1/getMergeQueueMetrics']?.get?.parameters ?? [];
    expect(params.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['query:repo', 'query:repoHost']);
  });

  test('documents the metrics answer as the text exposition format, not as JSON', () => {
    const responses = (doc.paths['/v1/getMergeQueueMetrics']?.get?.responses ?? {}) as Record<string, { content?: Record<string, unknown> }>;
    expect(Object.keys(responses['200']?.content ?? {})).toEqual(['text/plain; version=0.0.4; charset=utf-8']);
  });

  test('documents JSON answers for the POST endpoints', () => {
    for (const path of V1_PATHS.filter((p) => !p.endsWith('Metrics'))) {
      const responses = (doc.paths[path]?.post?.responses ?? {}) as Record<string, { content?: Record<string, unknown> }>;
      expect([path, Object.keys(responses['200']?.content ?? {})]).toEqual([path, ['application/json']]);
    }
  });

  test('declares the x-api-token apiKey scheme and requires it', () => {
    const schemes = Object.values(doc.components.securitySchemes);
    expect(schemes).toContainEqual({ type: 'apiKey', in: 'header', name: 'x-api-token' });
    const [schemeName] = Object.entries(doc.components.securitySchemes).find(([, s]) => s.name === 'x-api-token') ?? [];
    expect(doc.security).toContainEqual({ [schemeName as string]: [] });
  });

  test('GET /docs answers HTML (following a redirect if any)', async () => {
    let url = '/docs';
    let res = await h.app.inject({ method: 'GET', url });
    for (let hops = 0; hops < 3 && res.statusCode >= 300 && res.statusCode < 400; hops++) {
      const location = res.headers.location as string;
      url = new URL(location, `http://localhost${url}`).pathname;
      res = await h.app.inject({ method: 'GET', url });
    }
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<html/i);
  });
});

