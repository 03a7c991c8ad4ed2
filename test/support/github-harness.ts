import { generateKeyPairSync } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { buildServer } from '../../src/api/build-server.js';
import { composeQueueServices, type QueueServices } from '../../src/compose-queue.js';
import { setupGitHub } from '../../src/github/setup-github.js';
import type { Stores } from '../../src/ports/stores.js';
import { tokenService } from '../../src/tokens/token-service.js';
import { ServiceMetrics } from '../../src/observability/service-metrics.js';
import { startFakeGitHub, type FakeGitHub } from './fake-github/index.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from './test-database.js';

const SECRET = 'github-webhook-secret';
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });

/** The whole service (API, runner, GitHub App) listening on 127.0.0.1, wired to a fake GitHub. */
export interface GitHubHarness {
  fake: FakeGitHub;
  app: FastifyInstance;
  stores: Stores;
  services: QueueServices;
  database: TestDatabaseUri;
  /** An API token for the organization `acme` on github.com. */
  token: string;
  metrics: ServiceMetrics;
  api(path: string, body: unknown): Promise<{ status: number; json: () => Record<string, unknown> & { [k: string]: unknown }; body: string }>;
  close(): Promise<void>;
}

export async function startGitHubHarness(): Promise<GitHubHarness> {
  const fake = await startFakeGitHub();
  const database = await createTestDatabaseUri('github');
  const stores = await openMongoStores({ uri: database.uri });
  const log = pino({ level: process.env.MQ_TEST_LOG ?? 'silent' });
  const metrics = new ServiceMetrics({ processMetrics: false });
  const github = setupGitHub(
    { appId: String(fake.app.id), privateKey, webhookSecret: SECRET, baseUrl: fake.baseUrl, tuning: { unitMs: 5, spaceWrites: false }, metrics },
    stores,
    log,
  );
  const services = composeQueueServices({ stores, log, sandbox: false, hosts: { [github.hostName]: github.host }, maintenanceTasks: github.maintenanceTasks, pollMs: 100 });
  github.bindEvents(services.events);
  const app = await buildServer({ stores, gitHosts: services.gitHosts, runner: services.runner, webhooks: (deps) => github.webhooks(deps, services.events) });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  fake.webhooks.deliverTo({ url: `${address}/api/github/webhooks`, secret: SECRET });
  await services.runner.start();
  const token = (await tokenService(stores.tokens).create({ host: 'github.com', owner: 'acme' })).token;
  return {
    fake,
    app,
    stores,
    services,
    database,
    token,
    metrics,
    async api(path, body) {
      const res = await app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json', 'x-api-token': token }, payload: JSON.stringify(body) });
      return { status: res.statusCode, body: res.body, json: () => res.json() };
    },
    async close() {
      services.maintenance.stop();
      await app.close();
      await fake.close();
      await stores.close();
      await dropTestDatabase(database);
      await stopTestServer();
    },
  };
}
