import { createHash } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { MongoClient } from 'mongodb';
import { tokenService } from '../../src/tokens/token-service.js';
import { startApiHarness, repo, type ApiHarness } from '../support/api-harness.js';

/** x-api-token: who may call at all (401) and on which repositories (403). */

let h: ApiHarness;
let tokenA: string;
let tokenB: string;

beforeAll(async () => {
  h = await startApiHarness({ prefix: 'auth_scope' });
  tokenA = await h.tokenFor('org-a');
  tokenB = await h.tokenFor('org-b');
});

afterAll(async () => {
  await h.close();
});

const repoA = repo('org-a', 'app');
const repoB = repo('org-b', 'app');

/** A body that would be valid for every POST endpoint (extra fields are ignored). */
const fullBody = (r: ReturnType<typeof repo>, targetBranch: string) => ({
  repo: r,
  targetBranch,
  pr: { number: 1, sha: 'abcdef1abcdef1abcdef1abcdef1abcdef1abcde' },
  impactedTargets: ['//x'],
});

const POST_ENDPOINTS = [
  'submitPullRequest',
  'cancelPullRequest',
  'restartTestsOnPullRequest',
  'getSubmittedPullRequest',
  'setImpactedTargets',
  'getMergeQueueTestingDetails',
  'createQueue',
  'deleteQueue',
  'getQueue',
  'updateQueue',
  'listPullRequests',
] as const;

function request(
  method: 'GET' | 'POST',
  url: string,
  options: { token?: string; body?: string; contentType?: string; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method,
    url,
    headers: {
      ...(method === 'POST' ? { 'content-type': options.contentType ?? 'application/json' } : {}),
      ...(options.token !== undefined ? { 'x-api-token': options.token } : {}),
      ...options.headers,
    },
    ...(method === 'POST' ? { payload: options.body ?? '{}' } : {}),
  });
}

/** Every one of the 12 endpoints, with a body that would otherwise be accepted. */
function callEach(token: string | undefined, targetBranch = 'main', r = repoA): Promise<[string, LightMyRequestResponse][]> {
  return Promise.all([
    ...POST_ENDPOINTS.map(async (name): Promise<[string, LightMyRequestResponse]> => [
      name,
      await request('POST', `/v1/${name}`, { token, body: JSON.stringify(fullBody(r, targetBranch)) }),
    ]),
    (async (): Promise<[string, LightMyRequestResponse]> => [
      'getMergeQueueMetrics',
      await request('GET', '/v1/getMergeQueueMetrics', { token }),
    ])(),
  ]);
}

function expectPlainError(res: LightMyRequestResponse, status: number): void {
  expect({ status: res.statusCode, type: res.headers['content-type'] }).toEqual({ status, type: 'text/plain; charset=utf-8' });
  expect(res.body.trim().length).toBeGreaterThan(3);
  expect(res.body).not.toMatch(/\n\s+at /);
}

function statuses(results: [string, LightMyRequestResponse][]): Record<string, number> {
  return Object.fromEntries(results.map(([name, res]) => [name, res.statusCode]));
}

const all = (status: number) => Object.fromEntries([...POST_ENDPOINTS, 'getMergeQueueMetrics'].map((n) => [n, status]));

describe('401: missing, unknown or revoked token', () => {
  test('the endpoint list covers all 12 endpoints', async () => {
    const results = await callEach(undefined);
    expect(results).toHaveLength(12);
  });

  test('no x-api-token header: 401 plain text on every endpoint, naming the header', async () => {
    const results = await callEach(undefined);
    expect(statuses(results)).toEqual(all(401));
    for (const [, res] of results) {
      expectPlainError(res, 401);
      expect(res.body).toMatch(/x-api-token/);
    }
  });

  test('an empty x-api-token header: 401 on every endpoint', async () => {
    expect(statuses(await callEach(''))).toEqual(all(401));
  });

  test.each([
    ['a well-formed but unknown token', 'mq_' + 'A'.repeat(43)],
    ['a malformed token', 'not-a-token'],
    ['a known token with a changed character', 'CHANGED'],
    ['a very long header', 'mq_' + 'x'.repeat(10_000)],
  ])('%s: 401 on every endpoint', async (_what, given) => {
    const secret = given === 'CHANGED' ? tokenA.slice(0, -1) + (tokenA.endsWith('A') ? 'B' : 'A') : given;
    const results = await callEach(secret);
    expect(statuses(results)).toEqual(all(401));
    for (const [, res] of results) expectPlainError(res, 401);
  });

  test('nothing happened behind a 401: the queue was not created', async () => {
    const targetBranch = 'unauth-create';
    expect((await h.post('/v1/createQueue', { repo: repoA, targetBranch }, 'mq_' + 'B'.repeat(43))).statusCode).toBe(401);
    expect((await h.post('/v1/getQueue', { repo: repoA, targetBranch }, tokenA)).statusCode).toBe(404);
  });

  test('a revoked token gets 401 on the very next request, on every endpoint', async () => {
    const { token, record } = await tokenService(h.stores.tokens).create({ host: 'github.com', owner: 'org-a' });
    const before = await h.post('/v1/createQueue', { repo: repoA, targetBranch: 'before-revoke' }, token);
    expect(before.statusCode).toBe(200);
    expect(await tokenService(h.stores.tokens).revoke(record.id)).toBe(true);
    const results = await callEach(token, 'before-revoke');
    expect(statuses(results)).toEqual(all(401));
    for (const [, res] of results) expectPlainError(res, 401);
    // The queue is still there for a live token of the same organization.
    expect((await h.post('/v1/getQueue', { repo: repoA, targetBranch: 'before-revoke' }, tokenA)).statusCode).toBe(200);
    // Another token of the same organization is not affected by the revocation.
    expect((await h.post('/v1/getQueue', { repo: repoA, targetBranch: 'before-revoke' }, tokenA)).statusCode).toBe(200);
  });

  test('a token whose revocation happens between two requests of one client', async () => {
    const tokens = tokenService(h.stores.tokens);
    const { token, record } = await tokens.create({ host: 'github.com', owner: 'org-a' });
    expect((await request('GET', '/v1/getMergeQueueMetrics', { token })).statusCode).toBe(200);
    await tokens.revoke(record.id);
    expect((await request('GET', '/v1/getMergeQueueMetrics', { token })).statusCode).toBe(401);
    // Revoking twice is harmless and still answers true.
    expect(await tokens.revoke(record.id)).toBe(true);
    expect(await tokens.revoke('000000000000000000000000')).toBe(false);
  });

  describe('401 comes before the body is read', () => {
    test.each(POST_ENDPOINTS)('%s: invalid JSON without a token is a 401, not a 400', async (name) => {
      const res = await request('POST', `/v1/${name}`, { body: '{"repo": ' });
      expectPlainError(res, 401);
    });

    test.each(POST_ENDPOINTS)('%s: wrong content type without a token is a 401, not a 415', async (name) => {
      const res = await request('POST', `/v1/${name}`, { body: 'hello', contentType: 'text/plain' });
      expectPlainError(res, 401);
    });

    test('an oversized body (over 20 MiB) without a token is a 401, not a 413', async () => {
      const huge = JSON.stringify({ repo: repoA, targetBranch: 'main', padding: 'x'.repeat(21 * 1024 * 1024) });
      const res = await request('POST', '/v1/setImpactedTargets', { body: huge });
      expectPlainError(res, 401);
    });

    test('an oversized body with an unknown token is a 401 too', async () => {
      const huge = 'x'.repeat(21 * 1024 * 1024);
      const res = await request('POST', '/v1/createQueue', { body: huge, token: 'mq_' + 'C'.repeat(43) });
      expectPlainError(res, 401);
    });

    test('an invalid body with a valid token is judged on its merits (400)', async () => {
      expectPlainError(await request('POST', '/v1/createQueue', { body: '{"repo": ', token: tokenA }), 400);
    });
  });

  test('the unauthenticated endpoints stay open: /healthz, /readyz, /v1/openapi.json', async () => {
    for (const url of ['/healthz', '/readyz', '/v1/openapi.json']) {
      expect((await request('GET', url)).statusCode).toBe(200);
    }
  });
});

describe('403: a token acts only on its own organization', () => {
  const branchB = 'b-main';
  let queueBefore: Record<string, unknown>;
  let prBefore: Record<string, unknown>;

  beforeAll(async () => {
    expect((await h.post('/v1/createQueue', { repo: repoB, targetBranch: branchB, concurrency: 2 }, tokenB)).statusCode).toBe(200);
    expect((await h.post('/v1/submitPullRequest', { repo: repoB, targetBranch: branchB, pr: { number: 1 } }, tokenB)).statusCode).toBe(200);
    queueBefore = (await h.post('/v1/getQueue', { repo: repoB, targetBranch: branchB }, tokenB)).json();
    prBefore = (
      await h.post('/v1/getSubmittedPullRequest', { repo: repoB, targetBranch: branchB, pr: { number: 1 }, includeTimeline: true }, tokenB)
    ).json();
  });

  test("org A's token gets 403 on every POST endpoint for org B's repository", async () => {
    const results = (await callEach(tokenA, branchB, repoB)).filter(([name]) => name !== 'getMergeQueueMetrics');
    expect(results).toHaveLength(11);
    expect(statuses(results)).toEqual(Object.fromEntries(POST_ENDPOINTS.map((n) => [n, 403])));
    for (const [, res] of results) {
      expectPlainError(res, 403);
      expect(res.body).toMatch(/org-b/);
    }
  });

  test("org A's token gets 403 on the metrics of a repository of org B", async () => {
    const res = await request('GET', '/v1/getMergeQueueMetrics?repo=org-b/app&repoHost=github.com', { token: tokenA });
    expectPlainError(res, 403);
  });

  test('403 even where the queue or PR does not exist (no probing for names)', async () => {
    for (const name of POST_ENDPOINTS) {
      const res = await request('POST', `/v1/${name}`, { token: tokenA, body: JSON.stringify(fullBody(repoB, 'no-such-branch')) });
      expect([name, res.statusCode]).toEqual([name, 403]);
    }
  });

  test('the same owner on another host is another organization', async () => {
    const other = repo('org-a', 'app', 'gitlab.example.com');
    const res = await h.post('/v1/createQueue', { repo: other, targetBranch: 'main' }, tokenA);
    expectPlainError(res, 403);
    const metrics = await request('GET', '/v1/getMergeQueueMetrics?repoHost=gitlab.example.com', { token: tokenA });
    expectPlainError(metrics, 403);
  });

  test("org B's queue and PR are unchanged after org A's attempts, as org B sees them", async () => {
    await h.post('/v1/updateQueue', { repo: repoB, targetBranch: branchB, concurrency: 9, state: 'PAUSED' }, tokenA);
    await h.post('/v1/cancelPullRequest', { repo: repoB, targetBranch: branchB, pr: { number: 1 } }, tokenA);
    await h.post('/v1/submitPullRequest', { repo: repoB, targetBranch: branchB, pr: { number: 2 }, priority: 'urgent' }, tokenA);
    await h.post('/v1/submitPullRequest', { repo: repoB, targetBranch: branchB, pr: { number: 1 }, priority: 'urgent' }, tokenA);
    await h.post('/v1/setImpactedTargets', { repo: repoB, targetBranch: branchB, pr: { number: 1, sha: 'abcdef1abcdef1abcdef1abcdef1abcdef1abcde' }, impactedTargets: 'ALL' }, tokenA);
    await h.post('/v1/deleteQueue', { repo: repoB, targetBranch: branchB }, tokenA);
    await h.post('/v1/createQueue', { repo: repoB, targetBranch: 'a-made-this' }, tokenA);

    const queue = await h.post('/v1/getQueue', { repo: repoB, targetBranch: branchB }, tokenB);
    expect(queue.statusCode).toBe(200);
    expect(queue.json()).toEqual(queueBefore);
    const pr = await h.post('/v1/getSubmittedPullRequest', { repo: repoB, targetBranch: branchB, pr: { number: 1 }, includeTimeline: true }, tokenB);
    expect(pr.json()).toEqual(prBefore);
    expect(pr.json()).not.toHaveProperty('impactedTargets');
    const pr2 = await h.post('/v1/getSubmittedPullRequest', { repo: repoB, targetBranch: branchB, pr: { number: 2 } }, tokenB);
    expect(pr2.statusCode).toBe(404);
    expect((await h.post('/v1/getQueue', { repo: repoB, targetBranch: 'a-made-this' }, tokenB)).statusCode).toBe(404);
  });

  test("org B's token still works on its own repository and is refused on org A's", async () => {
    expect((await h.post('/v1/getQueue', { repo: repoB, targetBranch: branchB }, tokenB)).statusCode).toBe(200);
    expectPlainError(await h.post('/v1/getQueue', { repo: repoA, targetBranch: branchB }, tokenB), 403);
  });
});

describe('owner and host matching is case-insensitive', () => {
  test('a token for "Acme" works on repositories of owner "acme", "ACME" and host "GitHub.COM"', async () => {
    const token = await h.tokenFor('Acme');
    const created = await h.post('/v1/createQueue', { repo: repo('acme', 'tool'), targetBranch: 'main' }, token);
    expect(created.statusCode).toBe(200);
    expect((await h.post('/v1/getQueue', { repo: repo('ACME', 'tool', 'GitHub.COM'), targetBranch: 'main' }, token)).statusCode).toBe(200);
    const metrics = await request('GET', '/v1/getMergeQueueMetrics?repo=ACME/Tool&repoHost=GITHUB.com', { token });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toMatch(/repo="acme\/tool"/);
  });

  test('a token for "acme" works on "Acme" repositories', async () => {
    const token = await h.tokenFor('acme');
    expect((await h.post('/v1/getQueue', { repo: repo('Acme', 'tool'), targetBranch: 'main' }, token)).statusCode).toBe(200);
  });

  test('a token minted for host "GitHub.com" covers github.com', async () => {
    const token = await h.tokenFor('acme', 'GitHub.com');
    expect((await h.post('/v1/getQueue', { repo: repo('acme', 'tool'), targetBranch: 'main' }, token)).statusCode).toBe(200);
  });

  test('a prefix-sharing owner is another organization ("acme" is not "acme-labs")', async () => {
    const token = await h.tokenFor('acme');
    expectPlainError(await h.post('/v1/createQueue', { repo: repo('acme-labs', 'tool'), targetBranch: 'main' }, token), 403);
  });
});

describe('tokens at rest', () => {
  test('are stored only as hashes: no document holds the token; tokenHash is its sha256 hex', async () => {
    const tokens = tokenService(h.stores.tokens);
    const minted = await Promise.all([tokens.create({ host: 'github.com', owner: 'org-rest' }), tokens.create({ host: 'github.com', owner: 'org-rest' })]);
    const client = new MongoClient(h.database.uri, { serverSelectionTimeoutMS: 5_000 });
    try {
      await client.connect();
      const docs = await client.db(h.database.dbName).collection('api_tokens').find({}).toArray();
      const everything = JSON.stringify(docs);
      for (const { token, record } of [...minted, { token: tokenA, record: null }, { token: tokenB, record: null }]) {
        expect(token).toMatch(/^mq_/);
        expect(everything).not.toContain(token);
        // Not even the random part without its prefix.
        expect(everything).not.toContain(token.slice(3));
        const hash = createHash('sha256').update(token, 'utf8').digest('hex');
        const matching = docs.filter((d) => d.tokenHash === hash);
        expect(matching).toHaveLength(1);
        expect(matching[0]?.tokenHash).toMatch(/^[0-9a-f]{64}$/);
        if (record) expect(matching[0]?._id.toHexString()).toBe(record.id);
      }
      // Every document's hash is a sha256 hex digest.
      for (const doc of docs) expect(doc.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await client.close();
    }
  });

  test('listing tokens shows only a short prefix, never the secret', async () => {
    const { token } = await tokenService(h.stores.tokens).create({ host: 'github.com', owner: 'org-list' });
    const listed = await tokenService(h.stores.tokens).list();
    const mine = listed.filter((t) => t.owner === 'org-list');
    expect(mine).toHaveLength(1);
    expect(token.startsWith(mine[0]?.prefix ?? '?')).toBe(true);
    expect((mine[0]?.prefix ?? '').length).toBeLessThan(token.length / 2);
    expect(JSON.stringify(listed)).not.toContain(token);
  });
});
