import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { buildServer } from '../../src/api/build-server.js';
import { composeQueueServices } from '../../src/compose-queue.js';
import type { Maintenance } from '../../src/runner/maintenance.js';
import type { QueueRunner } from '../../src/runner/queue-runner.js';
import type { SandboxHost } from '../../src/adapters/sandbox/sandbox-host.js';
import type { WebhookOutbox } from '../../src/ports/webhook-outbox.js';
import type { ServiceMetrics } from '../../src/observability/service-metrics.js';
import { gitHostRegistry, type GitHost } from '../../src/ports/git-host.js';
import type { Stores } from '../../src/ports/stores.js';
import { tokenService } from '../../src/tokens/token-service.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from './test-database.js';

/** A server on its own throw-away database, driven with inject. */
export interface ApiHarness {
  app: FastifyInstance;
  stores: Stores;
  database: TestDatabaseUri;
  /** The periodic catch-up work, when the harness composed the queue services (sandbox). */
  maintenance?: Maintenance;
  /** The sandbox host, when the harness composed the queue services (fault injection). */
  sandbox?: SandboxHost;
  /** The queue runner, when the harness composed the queue services (the engine's view, in tests). */
  runner?: QueueRunner;
  /** Mints a token for an organization, as `mq token create` does. */
  tokenFor(owner: string, host?: string): Promise<string>;
  post(path: string, body: unknown, token?: string): Promise<LightMyRequestResponse>;
  /** keepDatabase: another harness still uses it; keepServer: the file's test server stays up. */
  close(options?: { keepDatabase?: boolean; keepServer?: boolean }): Promise<void>;
}

export async function startApiHarness(
  options: {
    hosts?: Record<string, GitHost>;
    now?: () => Date;
    prefix?: string;
    /** Serve the sandbox host, its CI durations scaled by this factor, and start the runner. */
    sandboxTimeScale?: number;
    /** Another harness's database: a second service on the same data. */
    database?: TestDatabaseUri;
    /** Where the runner publishes outgoing webhook events. */
    outbox?: WebhookOutbox;
    /** Operator metrics, served at GET /metrics behind this token. */
    operator?: { metrics: ServiceMetrics; token: string };
    /** Back-off of host actions through an outage. */
    hostRetryDelayMs?: (attempt: number) => number;
    /** This replica's lease owner name and lease length. */
    owner?: string;
    /** The views' cache of enqueued entries (0 for tests that write entries beneath the runner). */
    enqueuedCacheMaxAgeMs?: number;
  } = {},
): Promise<ApiHarness> {
  const database = options.database ?? (await createTestDatabaseUri(options.prefix ?? 'api'));
  const stores = await openMongoStores({ uri: database.uri });
  let app: FastifyInstance;
  let maintenance: Maintenance | undefined;
  let sandbox: SandboxHost | undefined;
  let runner: QueueRunner | undefined;
  if (options.sandboxTimeScale !== undefined) {
    const services = composeQueueServices({
      stores,
      log: silentLog,
      sandbox: true,
      sandboxTimeScale: options.sandboxTimeScale,
      hosts: options.hosts,
      pollMs: 200,
      ...(options.hostRetryDelayMs ? { hostRetryDelayMs: options.hostRetryDelayMs } : {}),
      ...(options.owner ? { owner: options.owner } : {}),
      ...(options.outbox ? { outbox: options.outbox } : {}),
      ...(options.operator ? { metrics: options.operator.metrics } : {}),
    });
    app = await buildServer({
      stores,
      gitHosts: services.gitHosts,
      runner: services.runner,
      sandbox: services.sandbox,
      now: options.now,
      ...(options.operator ? { metrics: options.operator.metrics, operatorToken: options.operator.token } : {}),
      ...(options.enqueuedCacheMaxAgeMs !== undefined ? { enqueuedCacheMaxAgeMs: options.enqueuedCacheMaxAgeMs } : {}),
    });
    await services.runner.start();
    maintenance = services.maintenance;
    sandbox = services.sandbox;
    runner = services.runner;
  } else {
    app = await buildServer({ stores, gitHosts: gitHostRegistry(options.hosts ?? {}), now: options.now, ...(options.enqueuedCacheMaxAgeMs !== undefined ? { enqueuedCacheMaxAgeMs: options.enqueuedCacheMaxAgeMs } : {}) });
  }
  await app.ready();
  const tokens = tokenService(stores.tokens);
  return {
    app,
    stores,
    database,
    ...(maintenance ? { maintenance } : {}),
    ...(sandbox ? { sandbox } : {}),
    ...(runner ? { runner } : {}),
    async tokenFor(owner, host = 'github.com') {
      return (await tokens.create({ host, owner })).token;
    },
    post(path, body, token) {
      return app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/json', ...(token ? { 'x-api-token': token } : {}) },
        payload: typeof body === 'string' ? body : JSON.stringify(body),
      });
    },
    async close(closeOptions = {}) {
      await app.close();
      await stores.close();
      if (closeOptions.keepDatabase) return;
      await dropTestDatabase(database);
      if (!closeOptions.keepServer) await stopTestServer();
    },
  };
}

const silentLog = { info: () => {}, warn: () => {}, error: () => {} };

export const repo = (owner = 'acme', name = 'widgets', host = 'github.com') => ({ host, owner, name });
