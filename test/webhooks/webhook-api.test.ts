import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { buildServer } from '../../src/api/build-server.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { tokenService } from '../../src/tokens/token-service.js';
import { composeOutgoingWebhooks, type OutgoingWebhooks } from '../../src/webhooks/compose-webhooks.js';
import { MAX_WEBHOOKS_PER_ORG } from '../../src/webhooks/webhook-service.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';
import { memoryLog, queueEvent, testKey } from './support.js';

/** The webhook endpoints of the v1 API: success, every error status, organization scoping, secrets shown once. */

let database: TestDatabaseUri;
let stores: Stores;
let app: FastifyInstance;
let outgoing: OutgoingWebhooks;
let tokenA: string;
let tokenB: string;
const serverLog: string[] = [];
const workerLog = memoryLog();
/** Every secret the API handed out: none may ever appear in a list answer or a log line. */
const secrets: string[] = [];

const DNS: Record<string, string[]> = {
  'hooks.acme.example': ['93.184.216.34'],
  'other.acme.example': ['2606:2800:220:1:248:1893:25c8:1946'],
  'internal.acme.example': ['10.1.2.3'],
  'rebind.acme.example': ['93.184.216.35', '::ffff:127.0.0.1'],
};
const lookup = async (host: string) => {
  const found = DNS[host];
  if (host === 'flaky-dns.acme.example') throw Object.assign(new Error('temporary failure'), { code: 'EAI_AGAIN' });
  if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return found;
};

beforeAll(async () => {
  database = await createTestDatabaseUri('webhook_api');
  stores = await openMongoStores({ uri: database.uri });
  outgoing = composeOutgoingWebhooks({ store: stores.webhooks, key: testKey(), allowPrivate: false, lookup, log: workerLog.log });
  const logger = pino({ level: 'trace' }, { write: (line: string) => void serverLog.push(line) });
  app = await buildServer({ stores, gitHosts: gitHostRegistry({}), outgoingWebhooks: outgoing.service, logger });
  await app.ready();
  const tokens = tokenService(stores.tokens);
  tokenA = (await tokens.create({ host: 'github.com', owner: 'acme' })).token;
  tokenB = (await tokens.create({ host: 'github.com', owner: 'globex' })).token;
});

afterAll(async () => {
  // Last, over everything the file did: no secret in any log line.
  const logs = [...serverLog, ...workerLog.lines].join('\n');
  expect(serverLog.length).toBeGreaterThan(10);
  for (const secret of secrets) {
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(secret.slice('whsec_'.length));
  }
  await app.close();
  await stores.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

/** token null: no x-api-token header at all. */
function post(path: string, body: unknown, token: string | null = tokenA, contentType = 'application/json'): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url: `/v1/${path}`,
    headers: { 'content-type': contentType, ...(token !== null ? { 'x-api-token': token } : {}) },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function expectPlainError(res: LightMyRequestResponse, status: number, mentions?: RegExp): void {
  expect({ status: res.statusCode, type: res.headers['content-type'] }).toEqual({ status, type: 'text/plain; charset=utf-8' });
  expect(res.body).toMatch(/[.!?]$/);
  if (mentions) expect(res.body).toMatch(mentions);
}

interface WebhookJson {
  id: string;
  url: string;
  eventTypes: string[] | null;
  description: string | null;
  repo: unknown;
  disabled: boolean;
  disabledReason: string | null;
  previousSecretExpiresAt: string | null;
}

async function create(body: Record<string, unknown>, token = tokenA): Promise<{ webhook: WebhookJson; secret: string }> {
  const res = await post('createWebhook', body, token);
  expect(res.statusCode).toBe(200);
  const json = res.json<{ webhook: WebhookJson; secret: string }>();
  secrets.push(json.secret);
  return json;
}

const ENDPOINTS = ['createWebhook', 'listWebhooks', 'updateWebhook', 'deleteWebhook', 'rotateWebhookSecret', 'listWebhookDeliveries', 'redeliverWebhook'];

test.each(ENDPOINTS)('%s: 401 without a token or with an unknown one', async (endpoint) => {
  expectPlainError(await post(endpoint, { id: 'wh_x', url: 'https://hooks.acme.example/' }, null), 401, /x-api-token/);
  expectPlainError(await post(endpoint, { id: 'wh_x', url: 'https://hooks.acme.example/' }, 'mq_not_a_real_token'), 401);
});

test('the endpoints are in the OpenAPI description', async () => {
  const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{ paths: Record<string, unknown> }>();
  for (const endpoint of ENDPOINTS) expect(Object.keys(doc.paths)).toContain(`/v1/${endpoint}`);
});

describe('createWebhook', () => {
  test('answers the subscription and its signing secret, once; event types in any case come back canonical', async () => {
    const res = await post('createWebhook', {
      url: 'https://hooks.acme.example/mq',
      eventTypes: ['PULL_REQUEST.MERGED', 'pull_request.Queued', 'pull_request.merged'],
      description: 'deploy bot',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ webhook: WebhookJson & Record<string, unknown>; secret: string }>();
    secrets.push(body.secret);
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(body.webhook).toEqual({
      id: expect.stringMatching(/^wh_[0-9a-f]{24}$/),
      org: { host: 'github.com', owner: 'acme' },
      repo: null,
      url: 'https://hooks.acme.example/mq',
      eventTypes: ['pull_request.queued', 'pull_request.merged'],
      description: 'deploy bot',
      disabled: false,
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
      consecutiveFailures: 0,
      previousSecretExpiresAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  test('narrowed to one repository of the organization', async () => {
    const { webhook } = await create({ url: 'https://hooks.acme.example/one', repo: { host: 'github.com', owner: 'acme', name: 'widgets' } });
    expect(webhook.repo).toEqual({ host: 'github.com', owner: 'acme', name: 'widgets' });
    expect(webhook.eventTypes).toBeNull();
  });

  test('403 for a repository of another organization', async () => {
    expectPlainError(await post('createWebhook', { url: 'https://hooks.acme.example/x', repo: { host: 'github.com', owner: 'globex', name: 'app' } }), 403, /globex/);
  });

  test.each([
    [{}, /Field 'url' is required\./],
    [{ url: '' }, /Field 'url' must not be empty\./],
    [{ url: 'https://hooks.acme.example/', eventTypes: ['pull_request.exploded'] }, /Field 'eventTypes\[0\]' must be one of: pull_request\.submitted/],
    [{ url: 'https://hooks.acme.example/', eventTypes: [] }, /Field 'eventTypes' must have at least 1 item/],
    [{ url: 'https://hooks.acme.example/', description: 'x'.repeat(501) }, /Field 'description' must be at most 500 characters long\./],
    [{ url: 'http://hooks.acme.example/' }, /must use https \(not http; an operator can allow such URLs with MQ_WEBHOOK_ALLOW_PRIVATE=true\)/],
    [{ url: 'https://internal.acme.example/' }, /internal\.acme\.example resolves to a private address/],
    [{ url: 'https://rebind.acme.example/' }, /resolves to a loopback address \(as IPv4-mapped IPv6\)/],
    [{ url: 'https://169.254.169.254/latest/meta-data/' }, /link-local address \(this includes cloud metadata/],
    [{ url: 'https://[::1]:8443/' }, /loopback/],
    [{ url: 'https://127.0.0.1/' }, /127\.0\.0\.1 is a loopback address/],
    [{ url: 'https://nowhere.acme.example/' }, /does not resolve \(ENOTFOUND\)/],
    [{ url: 'not a url' }, /not a valid absolute URL/],
    [{ url: 'https://bob:pw@hooks.acme.example/' }, /user name or password/],
  ])('400 naming why: %j', async (body, why) => {
    expectPlainError(await post('createWebhook', body), 400, why);
  });

  // Found by review: the resolver failing for a moment was answered as the caller's bad URL.
  test('a resolver failing for a moment is a 503 (try again), not a 400, and nothing is created', async () => {
    const before = (await post('listWebhooks', {})).json().webhooks.length;
    expectPlainError(await post('createWebhook', { url: 'https://flaky-dns.acme.example/' }), 503, /could not be looked up just now \(EAI_AGAIN\).*try again/);
    expect((await post('listWebhooks', {})).json().webhooks).toHaveLength(before);
  });

  test('a refusal does not name the address an internal host resolves to (no DNS oracle for any organization)', async () => {
    const res = await post('createWebhook', { url: 'https://internal.acme.example/' });
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toContain('10.1.2.3');
  });

  test('415 for a body that is not JSON', async () => {
    expectPlainError(await post('createWebhook', 'url=https://hooks.acme.example', tokenA, 'text/plain'), 415);
  });

  test(`409 beyond ${MAX_WEBHOOKS_PER_ORG} webhooks per organization`, async () => {
    const tokens = tokenService(stores.tokens);
    const crowded = (await tokens.create({ host: 'github.com', owner: 'crowded' })).token;
    for (let i = 0; i < MAX_WEBHOOKS_PER_ORG; i++) await create({ url: `https://hooks.acme.example/${i}` }, crowded);
    expectPlainError(await post('createWebhook', { url: 'https://hooks.acme.example/one-too-many' }, crowded), 409, /limit/);
  });
});

describe('listWebhooks', () => {
  test("lists the organization's webhooks only, never a secret", async () => {
    const mine = await create({ url: 'https://hooks.acme.example/listed' });
    const theirs = await create({ url: 'https://hooks.acme.example/theirs' }, tokenB);
    const res = await post('listWebhooks', {});
    expect(res.statusCode).toBe(200);
    const ids = res.json<{ webhooks: WebhookJson[] }>().webhooks.map((w) => w.id);
    expect(ids).toContain(mine.webhook.id);
    expect(ids).not.toContain(theirs.webhook.id);
    expect(res.body).not.toContain(mine.secret);
    expect(res.body).not.toMatch(/whsec_|sealed|"secret"|"secrets"/);
    const other = await post('listWebhooks', {}, tokenB);
    expect(other.json<{ webhooks: WebhookJson[] }>().webhooks.map((w) => w.id)).toEqual([theirs.webhook.id]);
    for (const secret of secrets) {
      expect(res.body).not.toContain(secret);
      expect(other.body).not.toContain(secret);
    }
  });
});

describe('updateWebhook', () => {
  test('changes what is given and keeps the rest; disabling shows a reason; enabling clears it', async () => {
    const { webhook } = await create({ url: 'https://hooks.acme.example/u', eventTypes: ['pull_request.failed'], description: 'd' });
    let res = await post('updateWebhook', { id: webhook.id, url: 'https://other.acme.example/u2', eventTypes: null });
    expect(res.statusCode).toBe(200);
    expect(res.json<WebhookJson>()).toMatchObject({ url: 'https://other.acme.example/u2', eventTypes: null, description: 'd', disabled: false });
    res = await post('updateWebhook', { id: webhook.id, enabled: false, description: null, eventTypes: ['PULL_REQUEST_BATCH.MERGED'] });
    expect(res.json<WebhookJson>()).toMatchObject({ disabled: true, disabledReason: 'Disabled through updateWebhook.', description: null, eventTypes: ['pull_request_batch.merged'] });
    const listed = (await post('listWebhooks', {})).json<{ webhooks: WebhookJson[] }>().webhooks.find((w) => w.id === webhook.id);
    expect(listed).toMatchObject({ disabled: true, disabledReason: 'Disabled through updateWebhook.' });
    res = await post('updateWebhook', { id: webhook.id, enabled: true });
    expect(res.json<WebhookJson>()).toMatchObject({ disabled: false, disabledReason: null });
  });

  test('400 for a refused URL or a bad field; 404 for an unknown id or one of another organization', async () => {
    const { webhook } = await create({ url: 'https://hooks.acme.example/v' });
    expectPlainError(await post('updateWebhook', { id: webhook.id, url: 'https://internal.acme.example/' }), 400, /private address/);
    expectPlainError(await post('updateWebhook', { id: webhook.id, enabled: 'yes' }), 400, /Field 'enabled' must be true or false\./);
    expectPlainError(await post('updateWebhook', { url: 'https://hooks.acme.example/' }), 400, /Field 'id' is required\./);
    const unknown = await post('updateWebhook', { id: 'wh_000000000000000000000000', enabled: false });
    expectPlainError(unknown, 404, /No webhook wh_000000000000000000000000 exists for acme on github\.com\./);
    const foreign = await post('updateWebhook', { id: webhook.id, enabled: false }, tokenB);
    expectPlainError(foreign, 404, new RegExp(`No webhook ${webhook.id} exists for globex on github\\.com\\.`));
    expect((await post('listWebhooks', {})).json<{ webhooks: WebhookJson[] }>().webhooks.find((w) => w.id === webhook.id)?.disabled).toBe(false);
  });
});

describe('rotateWebhookSecret', () => {
  test('answers a new secret; the old one keeps signing for a day by default', async () => {
    const { webhook, secret } = await create({ url: 'https://hooks.acme.example/r' });
    const before = Date.now();
    const res = await post('rotateWebhookSecret', { id: webhook.id });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ webhook: WebhookJson; secret: string; previousSecretExpiresAt: string }>();
    secrets.push(body.secret);
    expect(body.secret).toMatch(/^whsec_/);
    expect(body.secret).not.toBe(secret);
    const expires = Date.parse(body.previousSecretExpiresAt);
    expect(expires - before).toBeGreaterThanOrEqual(1440 * 60_000 - 1_000);
    expect(expires - before).toBeLessThanOrEqual(1440 * 60_000 + 5_000);
    expect(body.webhook.previousSecretExpiresAt).toBe(body.previousSecretExpiresAt);
    const short = await post('rotateWebhookSecret', { id: webhook.id, graceMinutes: 5 });
    secrets.push(short.json<{ secret: string }>().secret);
    expect(short.statusCode).toBe(200);
  });

  test('400 for a grace period out of range; 404 across organizations', async () => {
    const { webhook } = await create({ url: 'https://hooks.acme.example/r2' });
    expectPlainError(await post('rotateWebhookSecret', { id: webhook.id, graceMinutes: -1 }), 400, /graceMinutes/);
    expectPlainError(await post('rotateWebhookSecret', { id: webhook.id, graceMinutes: 10081 }), 400, /at most 10080/);
    expectPlainError(await post('rotateWebhookSecret', { id: webhook.id }, tokenB), 404);
  });
});

describe('listWebhookDeliveries and redeliverWebhook', () => {
  test('pages through deliveries newest first with their status; 400 for a foreign cursor; 404 across organizations', async () => {
    const { webhook } = await create({ url: 'https://hooks.acme.example/d', repo: { host: 'github.com', owner: 'acme', name: 'pager' } });
    for (let seq = 1; seq <= 5; seq++) await outgoing.outbox.publish(queueEvent(seq, 40 + seq, 'pull_request.submitted', { name: 'pager' }));
    const seen: string[] = [];
    let cursor: string | undefined;
    const sizes: number[] = [];
    do {
      const res = await post('listWebhookDeliveries', { id: webhook.id, take: 2, ...(cursor ? { cursor } : {}) });
      expect(res.statusCode).toBe(200);
      const page = res.json<{ deliveries: Record<string, unknown>[]; nextCursor?: string }>();
      sizes.push(page.deliveries.length);
      for (const d of page.deliveries) {
        expect(d).toEqual({
          id: expect.stringMatching(/^dlv_/),
          eventId: expect.stringMatching(/^evt_q1_\d_4\d$/),
          eventType: 'pull_request.submitted',
          status: 'pending',
          attempts: 0,
          lastResponseCode: null,
          lastError: null,
          lastAttemptAt: null,
          nextAttemptAt: expect.any(String),
          deliveredAt: null,
          createdAt: expect.any(String),
        });
        seen.push(String(d.eventId));
      }
      cursor = page.nextCursor;
    } while (cursor);
    expect(sizes).toEqual([2, 2, 1]);
    expect(new Set(seen).size).toBe(5);
    expectPlainError(await post('listWebhookDeliveries', { id: webhook.id, cursor: 'bm9wZQ' }), 400, /cursor/);
    expectPlainError(await post('listWebhookDeliveries', { id: webhook.id, take: 0 }), 400, /Field 'take' must be at least 1\./);
    expectPlainError(await post('listWebhookDeliveries', { id: webhook.id }, tokenB), 404);
  });

  test('redeliver: 200 with the delivery due now; 404 for an unknown delivery, another webhook’s, or another organization; 409 while disabled', async () => {
    const { webhook } = await create({ url: 'https://hooks.acme.example/rd', repo: { host: 'github.com', owner: 'acme', name: 'redo' } });
    const other = await create({ url: 'https://hooks.acme.example/rd2', repo: { host: 'github.com', owner: 'acme', name: 'elsewhere' } });
    await outgoing.outbox.publish(queueEvent(1, 60, 'pull_request.merged', { name: 'redo' }));
    await outgoing.outbox.publish(queueEvent(2, 61, 'pull_request.merged', { name: 'elsewhere' }));
    const [delivery] = (await post('listWebhookDeliveries', { id: webhook.id })).json<{ deliveries: { id: string }[] }>().deliveries;
    const [foreignDelivery] = (await post('listWebhookDeliveries', { id: other.webhook.id })).json<{ deliveries: { id: string }[] }>().deliveries;
    if (!delivery || !foreignDelivery) throw new Error('no deliveries');

    const res = await post('redeliverWebhook', { id: webhook.id, deliveryId: delivery.id });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: delivery.id, status: 'pending', nextAttemptAt: expect.any(String) });
    expectPlainError(await post('redeliverWebhook', { id: webhook.id, deliveryId: 'dlv_0' }), 404, /No delivery dlv_0/);
    expectPlainError(await post('redeliverWebhook', { id: webhook.id, deliveryId: foreignDelivery.id }), 404);
    expectPlainError(await post('redeliverWebhook', { id: webhook.id, deliveryId: delivery.id }, tokenB), 404, /No webhook/);
    expectPlainError(await post('redeliverWebhook', { id: webhook.id }), 400, /Field 'deliveryId' is required\./);
    await post('updateWebhook', { id: webhook.id, enabled: false });
    expectPlainError(await post('redeliverWebhook', { id: webhook.id, deliveryId: delivery.id }), 409, /disabled/);
  });
});

describe('deleteWebhook', () => {
  test('deletes the webhook with its deliveries; then 404; 404 across organizations', async () => {
    const { webhook } = await create({ url: 'https://hooks.acme.example/del', repo: { host: 'github.com', owner: 'acme', name: 'gone' } });
    await outgoing.outbox.publish(queueEvent(1, 70, 'pull_request.canceled', { name: 'gone' }));
    expectPlainError(await post('deleteWebhook', { id: webhook.id }, tokenB), 404);
    const res = await post('deleteWebhook', { id: webhook.id });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ deleted: true, id: webhook.id });
    expectPlainError(await post('deleteWebhook', { id: webhook.id }), 404);
    expectPlainError(await post('listWebhookDeliveries', { id: webhook.id }), 404);
    expect((await post('listWebhooks', {})).json<{ webhooks: WebhookJson[] }>().webhooks.map((w) => w.id)).not.toContain(webhook.id);
    expect(await stores.webhooks.pageDeliveries(webhook.id, 10)).toEqual([]);
  });
});
