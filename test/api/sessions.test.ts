import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import fastifyCookie from '@fastify/cookie';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { authenticateRequest } from '../../src/api/auth.js';
import { buildServer } from '../../src/api/build-server.js';
import { registerErrorHandling } from '../../src/api/errors.js';
import { SESSION_BODY_LIMIT_BYTES, sessionCookieOptions, sessionRoutes } from '../../src/api/routes/session-routes.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { tokenService } from '../../src/tokens/token-service.js';
import { startApiHarness, repo, type ApiHarness } from '../support/api-harness.js';

/** Dashboard sign-in: an organization token traded for an HttpOnly, SameSite=Strict session cookie. */

const HOUR_MS = 60 * 60 * 1000;
let h: ApiHarness;
let offsetMs = 0;
const now = () => new Date(Date.now() + offsetMs);
let tokenA: string;
let tokenB: string;

beforeAll(async () => {
  h = await startApiHarness({ prefix: 'sessions', now });
  tokenA = await h.tokenFor('org-a');
  tokenB = await h.tokenFor('org-b');
});

afterAll(async () => {
  await h.close();
});

afterEach(() => {
  offsetMs = 0;
});

const repoA = repo('org-a', 'app');
const repoB = repo('org-b', 'app');

interface Session {
  cookie: string;
  csrfToken: string;
  res: LightMyRequestResponse;
}

function setCookies(res: LightMyRequestResponse): string[] {
  const header = res.headers['set-cookie'];
  return header === undefined ? [] : Array.isArray(header) ? header : [header];
}

/** The one Set-Cookie of an answer, as its name=value and the set of its attributes. */
function theCookie(res: LightMyRequestResponse): { name: string; value: string; attributes: string[] } {
  const all = setCookies(res);
  expect(all).toHaveLength(1);
  const [pair = '', ...attributes] = (all[0] ?? '').split(';').map((s) => s.trim());
  const eq = pair.indexOf('=');
  return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes: attributes.sort() };
}

async function signIn(token: string, app: FastifyInstance = h.app, headers: Record<string, string> = {}): Promise<Session> {
  const res = await app.inject({ method: 'POST', url: '/ui/session', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify({ token }) });
  expect(res.statusCode).toBe(200);
  const { value } = theCookie(res);
  return { cookie: value, csrfToken: (res.json() as { csrfToken: string }).csrfToken, res };
}

function withSession(path: string, body: unknown, session: { cookie: string }, csrf?: string): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/json', cookie: `mq_session=${session.cookie}`, ...(csrf !== undefined ? { 'x-csrf-token': csrf } : {}) },
    payload: JSON.stringify(body),
  });
}

function getSession(cookie?: string): Promise<LightMyRequestResponse> {
  return h.app.inject({ method: 'GET', url: '/ui/session', headers: cookie !== undefined ? { cookie: `mq_session=${cookie}` } : {} });
}

function expectPlainError(res: LightMyRequestResponse, status: number): void {
  expect({ status: res.statusCode, type: res.headers['content-type'] }).toEqual({ status, type: 'text/plain; charset=utf-8' });
}

async function withDb<T>(use: (db: ReturnType<MongoClient['db']>) => Promise<T>): Promise<T> {
  const client = new MongoClient(h.database.uri, { serverSelectionTimeoutMS: 5_000 });
  try {
    await client.connect();
    return await use(client.db(h.database.dbName));
  } finally {
    await client.close();
  }
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const sessionDoc = (cookie: string) => withDb((db) => db.collection('ui_sessions').findOne({ _id: sha256(cookie) as never }));

describe('POST /ui/session: sign in', () => {
  test('a valid token: the session cookie with exactly HttpOnly, SameSite=Strict, Path=/, Max-Age (12 h), no Secure over http', async () => {
    const before = now().getTime();
    const { res, cookie } = await signIn(tokenA);
    const set = theCookie(res);
    expect(set.name).toBe('mq_session');
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(set.attributes).toEqual(['HttpOnly', 'Max-Age=43200', 'Path=/', 'SameSite=Strict'].sort());
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json() as { organization: unknown; csrfToken: string; expiresAt: string };
    expect(Object.keys(body).sort()).toEqual(['csrfToken', 'expiresAt', 'organization']);
    expect(body.organization).toEqual({ host: 'github.com', owner: 'org-a' });
    expect(body.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.csrfToken).not.toBe(cookie);
    const expires = Date.parse(body.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 12 * HOUR_MS);
    expect(expires).toBeLessThanOrEqual(now().getTime() + 12 * HOUR_MS);
  });

  test('the session is stored hashed: _id is the sha256 of the cookie, and neither the cookie nor the token is stored', async () => {
    const { cookie, csrfToken } = await signIn(tokenA);
    const [doc, everything] = await withDb(async (db) => [
      await db.collection('ui_sessions').findOne({ _id: sha256(cookie) as never }),
      JSON.stringify(await db.collection('ui_sessions').find({}).toArray()),
    ]);
    expect(doc).not.toBeNull();
    expect(doc?._id).toMatch(/^[0-9a-f]{64}$/);
    expect(doc?._id).not.toBe(cookie);
    expect(everything).not.toContain(cookie);
    expect(everything).not.toContain(tokenA.slice(3));
    const [tokenRecord] = (await tokenService(h.stores.tokens).list()).filter((t) => t.owner === 'org-a');
    expect(doc).toMatchObject({ kind: 'api_token', subject: tokenRecord?.id, host: 'github.com', owner: 'org-a', csrfToken });
    expect((doc?.expiresAt as Date).getTime() - (doc?.createdAt as Date).getTime()).toBe(12 * HOUR_MS);
  });

  test.each([
    ['a well-formed but unknown token', 'mq_' + 'A'.repeat(43)],
    ['a malformed token', 'not-a-token'],
    ['a known token with a changed character', 'CHANGED'],
  ])('%s: 401 plain text, no cookie, no session stored', async (_what, given) => {
    const token = given === 'CHANGED' ? tokenA.slice(0, -1) + (tokenA.endsWith('A') ? 'B' : 'A') : given;
    const count = () => withDb((db) => db.collection('ui_sessions').countDocuments());
    const before = await count();
    const res = await h.app.inject({ method: 'POST', url: '/ui/session', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ token }) });
    expectPlainError(res, 401);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(await count()).toBe(before);
  });

  test('a revoked token cannot sign in', async () => {
    const tokens = tokenService(h.stores.tokens);
    const { token, record } = await tokens.create({ host: 'github.com', owner: 'org-a' });
    await tokens.revoke(record.id);
    const res = await h.app.inject({ method: 'POST', url: '/ui/session', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ token }) });
    expectPlainError(res, 401);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  test.each([
    ['{}', "Field 'token' is required."],
    ['{"token": 5}', "Field 'token' must be a string."],
    ['{"token": ""}', "Field 'token' must not be empty."],
    ['[]', 'The request body must be a JSON object.'],
  ])('body %s: 400 naming the field', async (payload, message) => {
    const res = await h.app.inject({ method: 'POST', url: '/ui/session', headers: { 'content-type': 'application/json' }, payload });
    expectPlainError(res, 400);
    expect(res.body).toBe(message);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  test('only JSON: a text/plain or form body is a 415 (a cross-site form cannot sign anyone in)', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await h.app.inject({ method: 'POST', url: '/ui/session', headers: { 'content-type': type }, payload: `token=${tokenA}` });
      expectPlainError(res, 415);
    }
  });

  test('a body over 4 KiB is a 413 naming the sign-in limit; a token near the limit still signs in', async () => {
    const big = JSON.stringify({ token: tokenA, pad: 'a'.repeat(64 * 1024) });
    const res = await h.app.inject({ method: 'POST', url: '/ui/session', headers: { 'content-type': 'application/json' }, payload: big });
    expectPlainError(res, 413);
    expect(res.body).toBe(`The sign-in body is larger than the limit of ${SESSION_BODY_LIMIT_BYTES} bytes; send only {"token": "..."}.`);
    expect(res.headers['set-cookie']).toBeUndefined();
    // Padded with white space up to the limit: still read.
    const padded = JSON.stringify({ token: tokenA }).padEnd(SESSION_BODY_LIMIT_BYTES, ' ');
    const ok = await h.app.inject({ method: 'POST', url: '/ui/session', headers: { 'content-type': 'application/json' }, payload: padded });
    expect(ok.statusCode).toBe(200);
    // Other errors on the route keep the server's own answers.
    const invalid = await h.app.inject({ method: 'POST', url: '/ui/session', headers: { 'content-type': 'application/json' }, payload: '{"token":' });
    expectPlainError(invalid, 400);
    expect(invalid.body).toBe('The request body is not valid JSON.');
  });

  test('a large body is refused unread: neither parsed nor authenticated (anyone can send one, signed in or not)', async () => {
    let parsed = 0;
    let authenticated = 0;
    const app = Fastify({ bodyLimit: 20 * 1024 * 1024 });
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    registerErrorHandling(app, 20 * 1024 * 1024);
    // The server's JSON parser, counted.
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      parsed++;
      try {
        done(null, JSON.parse(body as string));
      } catch (error) {
        done(error as Error, undefined);
      }
    });
    await app.register(fastifyCookie);
    const tokens = tokenService(h.stores.tokens);
    const counted = { ...tokens, authenticate: (secret: string) => (authenticated++, tokens.authenticate(secret)) };
    await app.register(sessionRoutes({ tokens: counted, stores: h.stores, now }));
    await app.ready();
    try {
      const big = JSON.stringify({ token: 'x', pad: 'a'.repeat(512 * 1024) });
      const res = await app.inject({ method: 'POST', url: '/ui/session', headers: { 'content-type': 'application/json' }, payload: big });
      expectPlainError(res, 413);
      expect({ parsed, authenticated }).toEqual({ parsed: 0, authenticated: 0 });
      const small = await app.inject({ method: 'POST', url: '/ui/session', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ token: tokenA }) });
      expect(small.statusCode).toBe(200);
      expect({ parsed, authenticated }).toEqual({ parsed: 1, authenticated: 1 });
    } finally {
      await app.close();
    }
  });

  test('signing in again replaces the session the browser had', async () => {
    const first = await signIn(tokenA);
    const second = await signIn(tokenA, h.app, { cookie: `mq_session=${first.cookie}` });
    expect(second.cookie).not.toBe(first.cookie);
    expectPlainError(await getSession(first.cookie), 401);
    expect((await getSession(second.cookie)).statusCode).toBe(200);
  });

  test('Secure is added when the request came over https (trustProxy and x-forwarded-proto), and only then', async () => {
    const app = Fastify({ trustProxy: true });
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    await app.register(fastifyCookie);
    await app.register(sessionRoutes({ tokens: tokenService(h.stores.tokens), stores: h.stores, now }));
    await app.ready();
    try {
      const https = theCookie((await signIn(tokenA, app, { 'x-forwarded-proto': 'https' })).res);
      expect(https.attributes).toEqual(['HttpOnly', 'Max-Age=43200', 'Path=/', 'SameSite=Strict', 'Secure'].sort());
      // With the __Host- prefix over https (browsers take it only Secure, Path=/, without Domain); plain over http.
      expect(https.name).toBe('__Host-mq_session');
      const http = theCookie((await signIn(tokenA, app, { 'x-forwarded-proto': 'http' })).res);
      expect(http.attributes).not.toContain('Secure');
      expect(http.name).toBe('mq_session');
    } finally {
      await app.close();
    }
    expect(sessionCookieOptions('https', 10)).toEqual({ httpOnly: true, sameSite: 'strict', path: '/', maxAge: 10, secure: true });
    expect(sessionCookieOptions('http', 10).secure).toBe(false);
  });

  test('over https only the __Host- cookie is read: a plain mq_session (which a sibling subdomain could set) names no session', async () => {
    const app = await buildServer({ stores: h.stores, gitHosts: gitHostRegistry({}), trustProxyHops: 1 });
    await app.ready();
    try {
      const overHttps = { 'x-forwarded-proto': 'https' };
      const session = await signIn(tokenA, app, overHttps);
      const read = (cookie: string) => app.inject({ method: 'GET', url: '/ui/session', headers: { ...overHttps, cookie } });
      expect((await read(`__Host-mq_session=${session.cookie}`)).statusCode).toBe(200);
      expectPlainError(await read(`mq_session=${session.cookie}`), 401);
      // Signing out clears the cookie by the name it was set with.
      const out = await app.inject({ method: 'DELETE', url: '/ui/session', headers: { ...overHttps, cookie: `__Host-mq_session=${session.cookie}`, 'x-csrf-token': session.csrfToken } });
      expect(out.statusCode).toBe(204);
      expect(theCookie(out)).toMatchObject({ name: '__Host-mq_session', value: '' });
      expectPlainError(await read(`__Host-mq_session=${session.cookie}`), 401);
    } finally {
      await app.close();
    }
  });

  test('behind a TLS proxy (trustProxyHops, MQ_TRUST_PROXY_HOPS): the service believes its X-Forwarded-Proto and the cookie is Secure; without it, never', async () => {
    for (const [hops, secure] of [[1, true], [undefined, false]] as const) {
      const app = await buildServer({ stores: h.stores, gitHosts: gitHostRegistry({}), ...(hops ? { trustProxyHops: hops } : {}) });
      await app.ready();
      try {
        const attributes = theCookie((await signIn(tokenA, app, { 'x-forwarded-proto': 'https' })).res).attributes;
        expect(attributes.includes('Secure')).toBe(secure);
      } finally {
        await app.close();
      }
    }
  });

  test('the lifetime is configurable (sessionLifetimeMs)', async () => {
    const app = await buildServer({ stores: h.stores, gitHosts: gitHostRegistry({}), sessionLifetimeMs: 60_000 });
    await app.ready();
    try {
      const { res } = await signIn(tokenA, app);
      expect(theCookie(res).attributes).toContain('Max-Age=60');
      const expires = Date.parse((res.json() as { expiresAt: string }).expiresAt);
      expect(Math.abs(expires - (Date.now() + 60_000))).toBeLessThan(5_000);
    } finally {
      await app.close();
    }
  });
});

describe('GET /ui/session', () => {
  test('with a valid cookie: the same answer as the sign-in', async () => {
    const { cookie, res: signedIn } = await signIn(tokenA);
    const res = await getSession(cookie);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(signedIn.json());
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  test('without a cookie: 401', async () => {
    const res = await getSession();
    expectPlainError(res, 401);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  test.each([
    ['an unknown', 'A'.repeat(43)],
    ['a malformed', 'x'],
    ['an operator as the', '{"$ne":null}'],
  ])('%s cookie: 401, and the cookie is cleared', async (_what, value) => {
    const res = await getSession(encodeURIComponent(value));
    expectPlainError(res, 401);
    expect(theCookie(res)).toMatchObject({ name: 'mq_session', value: '' });
    expect(theCookie(res).attributes).toContain('Max-Age=0');
  });
});

describe('the API through a session', () => {
  test('a /v1 call with the cookie and the CSRF header works, as the token would', async () => {
    const session = await signIn(tokenA);
    const created = await withSession('/v1/createQueue', { repo: repoA, targetBranch: 'via-session' }, session, session.csrfToken);
    expect(created.statusCode).toBe(200);
    const read = await withSession('/v1/getQueue', { repo: repoA, targetBranch: 'via-session' }, session, session.csrfToken);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual((await h.post('/v1/getQueue', { repo: repoA, targetBranch: 'via-session' }, tokenA)).json());
  });

  test.each([
    ['no', undefined],
    ['an empty', ''],
    ['a wrong', 'A'.repeat(43)],
  ])('the cookie with %s CSRF header: 403 naming CSRF, and nothing changed', async (_what, csrf) => {
    const session = await signIn(tokenA);
    const targetBranch = `no-csrf-${csrf === undefined ? 'none' : csrf.length}`;
    const res = await withSession('/v1/createQueue', { repo: repoA, targetBranch }, session, csrf);
    expectPlainError(res, 403);
    expect(res.body).toMatch(/CSRF/);
    expect((await h.post('/v1/getQueue', { repo: repoA, targetBranch }, tokenA)).statusCode).toBe(404);
  });

  test("another session's CSRF token is refused", async () => {
    const mine = await signIn(tokenA);
    const other = await signIn(tokenA);
    expectPlainError(await withSession('/v1/createQueue', { repo: repoA, targetBranch: 'other-csrf' }, mine, other.csrfToken), 403);
    expect((await h.post('/v1/getQueue', { repo: repoA, targetBranch: 'other-csrf' }, tokenA)).statusCode).toBe(404);
  });

  test('the CSRF check comes before the body is read (invalid JSON is still a 403)', async () => {
    const session = await signIn(tokenA);
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/createQueue',
      headers: { 'content-type': 'application/json', cookie: `mq_session=${session.cookie}` },
      payload: '{"repo": ',
    });
    expectPlainError(res, 403);
  });

  test('a GET (metrics) needs no CSRF header', async () => {
    const session = await signIn(tokenA);
    const res = await h.app.inject({ method: 'GET', url: '/v1/getMergeQueueMetrics', headers: { cookie: `mq_session=${session.cookie}` } });
    expect(res.statusCode).toBe(200);
  });

  test("another organization's queue through a session: 403, and nothing created", async () => {
    expect((await h.post('/v1/createQueue', { repo: repoB, targetBranch: 'b-main' }, tokenB)).statusCode).toBe(200);
    const session = await signIn(tokenA);
    const read = await withSession('/v1/getQueue', { repo: repoB, targetBranch: 'b-main' }, session, session.csrfToken);
    expectPlainError(read, 403);
    expect(read.body).toMatch(/org-b/);
    expectPlainError(await withSession('/v1/createQueue', { repo: repoB, targetBranch: 'a-made-this' }, session, session.csrfToken), 403);
    expect((await h.post('/v1/getQueue', { repo: repoB, targetBranch: 'a-made-this' }, tokenB)).statusCode).toBe(404);
  });

  test('an x-api-token header is judged on its own: a bad header is a 401 even with a valid cookie', async () => {
    const session = await signIn(tokenA);
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/getQueue',
      headers: { 'content-type': 'application/json', cookie: `mq_session=${session.cookie}`, 'x-csrf-token': session.csrfToken, 'x-api-token': 'mq_' + 'Z'.repeat(43) },
      payload: JSON.stringify({ repo: repoA, targetBranch: 'via-session' }),
    });
    expectPlainError(res, 401);
  });

  test('an unknown cookie: 401 on /v1', async () => {
    const res = await withSession('/v1/getQueue', { repo: repoA, targetBranch: 'main' }, { cookie: 'B'.repeat(43) }, 'x');
    expectPlainError(res, 401);
  });
});

describe('the end of a session', () => {
  test('it expires after its lifetime: 401 on /ui/session and /v1, and the stored session is deleted', async () => {
    const session = await signIn(tokenA);
    offsetMs = 12 * HOUR_MS - 60_000;
    expect((await getSession(session.cookie)).statusCode).toBe(200);
    offsetMs = 12 * HOUR_MS + 1_000;
    expectPlainError(await getSession(session.cookie), 401);
    expectPlainError(await withSession('/v1/getQueue', { repo: repoA, targetBranch: 'main' }, session, session.csrfToken), 401);
    expect(await sessionDoc(session.cookie)).toBeNull();
  });

  test('revoking its token ends it at once', async () => {
    const tokens = tokenService(h.stores.tokens);
    const { token, record } = await tokens.create({ host: 'github.com', owner: 'org-a' });
    const session = await signIn(token);
    expect((await withSession('/v1/createQueue', { repo: repoA, targetBranch: 'before-revoke' }, session, session.csrfToken)).statusCode).toBe(200);
    await tokens.revoke(record.id);
    expectPlainError(await withSession('/v1/getQueue', { repo: repoA, targetBranch: 'before-revoke' }, session, session.csrfToken), 401);
    expectPlainError(await getSession(session.cookie), 401);
    expect(await sessionDoc(session.cookie)).toBeNull();
    // Sessions of other tokens of the organization are not affected.
    const other = await signIn(tokenA);
    expect((await withSession('/v1/getQueue', { repo: repoA, targetBranch: 'before-revoke' }, other, other.csrfToken)).statusCode).toBe(200);
  });

  test('sign-out needs the CSRF header; then the cookie is cleared and the old cookie refused', async () => {
    const session = await signIn(tokenA);
    const signOut = (csrf?: string) =>
      h.app.inject({ method: 'DELETE', url: '/ui/session', headers: { cookie: `mq_session=${session.cookie}`, ...(csrf !== undefined ? { 'x-csrf-token': csrf } : {}) } });

    const refused = await signOut();
    expectPlainError(refused, 403);
    expect(refused.body).toMatch(/CSRF/);
    expect(refused.headers['set-cookie']).toBeUndefined();
    expectPlainError(await signOut('wrong'), 403);
    expect((await getSession(session.cookie)).statusCode).toBe(200);

    const res = await signOut(session.csrfToken);
    expect(res.statusCode).toBe(204);
    const cleared = theCookie(res);
    expect(cleared).toMatchObject({ name: 'mq_session', value: '' });
    expect(cleared.attributes).toEqual(expect.arrayContaining(['Max-Age=0', 'Path=/', 'HttpOnly', 'SameSite=Strict']));
    expect(await sessionDoc(session.cookie)).toBeNull();
    expectPlainError(await getSession(session.cookie), 401);
    expectPlainError(await withSession('/v1/getQueue', { repo: repoA, targetBranch: 'via-session' }, session, session.csrfToken), 401);
    // Signing out again (an ended session) just clears the cookie.
    expect((await signOut(session.csrfToken)).statusCode).toBe(204);
  });
});

describe('authenticateRequest (for GET routes such as an event stream)', () => {
  test('accepts the header or the cookie, without CSRF; null otherwise', async () => {
    const deps = { tokens: tokenService(h.stores.tokens), stores: h.stores, now };
    const app = Fastify();
    await app.register(fastifyCookie);
    app.get('/who', async (request) => {
      const token = await authenticateRequest(request, deps);
      return { owner: token?.owner ?? null, same: request.apiToken === token };
    });
    await app.ready();
    try {
      const session = await signIn(tokenB);
      const who = async (headers: Record<string, string>) => (await app.inject({ method: 'GET', url: '/who', headers })).json() as { owner: string | null; same: boolean };
      expect(await who({ cookie: `mq_session=${session.cookie}` })).toEqual({ owner: 'org-b', same: true });
      expect(await who({ 'x-api-token': tokenA })).toEqual({ owner: 'org-a', same: true });
      expect(await who({})).toEqual({ owner: null, same: true });
      expect(await who({ cookie: `mq_session=${'C'.repeat(43)}` })).toEqual({ owner: null, same: true });
      expect(await who({ 'x-api-token': 'nope', cookie: `mq_session=${session.cookie}` })).toEqual({ owner: null, same: true });
    } finally {
      await app.close();
    }
  });
});

describe('secrets stay out of the logs', () => {
  test('neither the session cookie, nor the CSRF token, nor the API token appears in request logs', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = pino({ level: 'trace' }, stream);
    const app = await buildServer({ stores: h.stores, gitHosts: gitHostRegistry({}), logger });
    await app.ready();
    try {
      const session = await signIn(tokenA, app);
      await app.inject({ method: 'GET', url: '/ui/session', headers: { cookie: `mq_session=${session.cookie}` } });
      await app.inject({
        method: 'POST',
        url: '/v1/getQueue',
        headers: { 'content-type': 'application/json', cookie: `mq_session=${session.cookie}`, 'x-csrf-token': session.csrfToken },
        payload: JSON.stringify({ repo: repoA, targetBranch: 'via-session' }),
      });
      await app.inject({ method: 'DELETE', url: '/ui/session', headers: { cookie: `mq_session=${session.cookie}`, 'x-csrf-token': session.csrfToken } });
      const logged = lines.join('');
      expect(logged).toMatch(/incoming request/);
      expect(logged).toMatch(/\/ui\/session/);
      expect(logged).not.toContain(session.cookie);
      expect(logged).not.toContain(session.csrfToken);
      expect(logged).not.toContain(tokenA.slice(3));
    } finally {
      await app.close();
    }
  });
});
