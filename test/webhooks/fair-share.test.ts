/**
 * One organization's silent endpoints (they accept connections and never
 * answer: each attempt costs the whole timeout) do not hold another
 * organization's deliveries: a round takes at most half the lanes' worth of
 * one organization's chains while others have deliveries due (found by review:
 * with 20 PRs' events for a silent endpoint, a healthy one waited 5 timeouts).
 * One organization alone still takes the whole round.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { WebhookDeliveryRecord, WebhookSubscriptionRecord } from '../../src/ports/webhook-store.js';
import { WebhookDeliveryWorker } from '../../src/webhooks/delivery-worker.js';
import { generateSigningSecret, SecretBox } from '../../src/webhooks/secret-box.js';
import { openDeliveryDatabase, type DeliveryDatabase } from './rig.js';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
let db: DeliveryDatabase;
let box: SecretBox;
beforeAll(async () => {
  db = await openDeliveryDatabase('fair_share');
  box = new SecretBox(db.key);
});
afterEach(() => db.cleanUp());
afterAll(() => db.close());

async function subscribe(id: string, owner: string, url: string) {
  const record: WebhookSubscriptionRecord = {
    id, org: { host: 'github.com', owner }, repo: null, url, eventTypes: null, description: null,
    secrets: [{ sealed: box.seal(generateSigningSecret(), id), createdAt: new Date(), expiresAt: null }],
    disabledReason: null, disabledAt: null, failingSince: null, consecutiveFailures: 0, createdAt: new Date(), updatedAt: new Date(),
  };
  await db.stores.webhooks.insertSubscription(record);
  db.created.push(id);
}

const due = (id: string, subscriptionId: string, orderingKey: string, at: number): WebhookDeliveryRecord => ({
  id, eventId: `evt_${id}`, subscriptionId, eventType: 'pull_request.queued', orderingKey, sequence: 1, body: '{}', status: 'pending',
  attempts: 0, scheduleStart: 0, nextAttemptAt: new Date(at), lastAttemptAt: null, lastResponseCode: null, lastError: null, createdAt: new Date(at), deliveredAt: null,
});

async function listening<T extends Server | ReturnType<typeof createTcpServer>>(server: T): Promise<{ server: T; url: string }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}
const closed = (server: { close(done: () => void): unknown }) => new Promise<void>((resolve) => server.close(() => resolve()));

test('a healthy endpoint of another organization is delivered at once while a silent one has 20 PRs due', async () => {
  const sockets: Socket[] = [];
  const silent = await listening(createTcpServer((socket) => void sockets.push(socket)));
  let deliveredAt = 0;
  const healthy = await listening(createHttpServer((req, res) => req.resume().on('end', () => ((deliveredAt ||= Date.now()), res.end()))));
  await subscribe('wh_noisy', 'noisy', silent.url);
  await subscribe('wh_quiet', 'quiet', healthy.url);
  const t0 = Date.now() - 1_000;
  for (let pr = 1; pr <= 20; pr += 1) await db.stores.webhooks.insertDelivery(due(`a${pr}`, 'wh_noisy', `q:${pr}`, t0 + pr));
  await db.stores.webhooks.insertDelivery(due('b1', 'wh_quiet', 'q2:1', t0 + 100));

  const worker = new WebhookDeliveryWorker({ store: db.stores.webhooks, secrets: box, log: quiet, allowPrivate: true, timeoutMs: 400, pollMs: 20 });
  const started = Date.now();
  worker.start();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  await worker.stop({ graceMs: 0 });
  for (const socket of sockets) socket.destroy();
  await closed(silent.server);
  await closed(healthy.server);
  expect(deliveredAt).toBeGreaterThan(0);
  // Due at once, answered at once: in the first round, beside two of the silent endpoint's attempts (400 ms each).
  expect(deliveredAt - started).toBeLessThan(1_000);
});

test('one organization alone takes the whole round', async () => {
  let delivered = 0;
  const healthy = await listening(createHttpServer((req, res) => req.resume().on('end', () => (delivered++, res.end()))));
  await subscribe('wh_alone', 'alone', healthy.url);
  const t0 = Date.now() - 1_000;
  for (let pr = 1; pr <= 10; pr += 1) await db.stores.webhooks.insertDelivery(due(`s${pr}`, 'wh_alone', `q:${pr}`, t0 + pr));
  const worker = new WebhookDeliveryWorker({ store: db.stores.webhooks, secrets: box, log: quiet, allowPrivate: true, timeoutMs: 2_000, pollMs: 60_000 });
  expect(await worker.runOnce()).toBe(10);
  expect(delivered).toBe(10);
  await worker.stop({ graceMs: 0 });
  await closed(healthy.server);
});
