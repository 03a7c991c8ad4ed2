import type { FastifyInstance } from 'fastify';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { buildServer } from '../../src/api/build-server.js';
import { composeQueueServices, type QueueServices } from '../../src/compose-queue.js';
import type { Stores } from '../../src/ports/stores.js';
import type { WebhookPayload } from '../../src/ports/webhook-outbox.js';
import { tokenService } from '../../src/tokens/token-service.js';
import { composeOutgoingWebhooks, type OutgoingWebhooks } from '../../src/webhooks/compose-webhooks.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';
import { memoryLog, seqOf, startReceiver, testKey, waitFor, type Receiver } from './support.js';

/**
 * The whole path on the sandbox host: an organization registers its endpoint
 * through the API, a PR goes through the queue, and the receiver gets the PR's
 * events signed, verified by the stock library, in order.
 */

let database: TestDatabaseUri;
let stores: Stores;
let services: QueueServices;
let outgoing: OutgoingWebhooks;
let app: FastifyInstance;
let receiver: Receiver;
let token: string;

beforeAll(async () => {
  database = await createTestDatabaseUri('webhook_e2e');
  stores = await openMongoStores({ uri: database.uri });
  const quiet = { info: () => {}, warn: () => {}, error: () => {} };
  outgoing = composeOutgoingWebhooks({ store: stores.webhooks, key: testKey(), allowPrivate: true, log: memoryLog().log, pollMs: 20 });
  services = composeQueueServices({ stores, log: quiet, sandbox: true, sandboxTimeScale: 0.02, pollMs: 200, outbox: outgoing.outbox });
  app = await buildServer({ stores, gitHosts: services.gitHosts, runner: services.runner, sandbox: services.sandbox, outgoingWebhooks: outgoing.service });
  await app.ready();
  await services.runner.start();
  outgoing.worker.start();
  receiver = await startReceiver();
  token = (await tokenService(stores.tokens).create({ host: 'sandbox', owner: 'demo' })).token;
});

afterAll(async () => {
  await outgoing.worker.stop();
  await receiver.close();
  await app.close();
  await stores.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

async function ok(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json', 'x-api-token': token }, payload: JSON.stringify(body) });
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

test('a PR merged through the queue reaches the registered endpoint as signed events, in order', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'webhooked' };
  const created = (await ok('/v1/createWebhook', { url: receiver.url, repo })) as { secret: string; webhook: { id: string } };
  receiver.secrets.push(created.secret);
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, title: 'Add feature', ciSeconds: 5 });
  await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });

  const types = () => receiver.received.filter((r) => r.status === 200).map((r) => (JSON.parse(r.body) as WebhookPayload).type);
  await waitFor(() => types().includes('pull_request.merged'), 20_000, 'pull_request.merged at the receiver');

  expect(receiver.verificationFailures).toEqual([]);
  expect(types()[0]).toBe('pull_request.submitted');
  expect(types()).toEqual(expect.arrayContaining(['pull_request.queued', 'pull_request.testing', 'pull_request.merged']));
  expect(types().indexOf('pull_request.testing')).toBeLessThan(types().indexOf('pull_request.merged'));
  const seqs = receiver.received.map((r) => seqOf(r.webhookId));
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  const merged = receiver.received.map((r) => JSON.parse(r.body) as WebhookPayload).find((p) => p.type === 'pull_request.merged');
  expect(merged).toMatchObject({ repository: repo, target_branch: 'main', pr_number: 1, batched: false, is_bisection: false });

  await waitFor(async () => {
    const page = (await ok('/v1/listWebhookDeliveries', { id: created.webhook.id, take: 100 })) as { deliveries: { status: string }[] };
    return page.deliveries.length === receiver.received.length && page.deliveries.every((d) => d.status === 'delivered');
  }, 5_000, 'every delivery recorded as delivered');
});
