/**
 * The service: configuration → database → HTTP server. Wiring only; every
 * decision lives in the modules it connects.
 */
import { hostname } from 'node:os';
import Fastify from 'fastify';
import { ServiceMetrics } from './observability/service-metrics.js';
import { operatorMetricsRoute } from './observability/operator-routes.js';
import { openDatabase, type OpenDatabase } from './database.js';
import { buildServer } from './api/build-server.js';
import { loadConfig } from './config/env.js';
import { createLogger } from './logger.js';
import { composeQueueServices } from './compose-queue.js';
import type { ApiDeps } from './api/deps.js';
import { setupGitHub } from './github/setup-github.js';
import { join } from 'node:path';
import { findProjectRoot } from './local-db/ferretdb-binary.js';
import { composeOutgoingWebhooks } from './webhooks/compose-webhooks.js';
import { loadWebhookSecretKey } from './webhooks/secret-key.js';

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  console.error(loaded.message);
  process.exit(1);
}
const config = loaded.config;
const log = createLogger(config);
for (const warning of loaded.warnings ?? []) log.warn(warning);

let database: OpenDatabase;
try {
  database = await openDatabase(config, { info: (m) => log.info(m), warn: (m) => log.warn(m) });
} catch (error) {
  log.fatal({ err: error }, 'no database');
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
log.info({ source: database.source }, 'database ready');

const metrics = new ServiceMetrics();
let webhookKey: Buffer;
try {
  // Next to the local database's data when there is one, else in the working directory.
  const keyFile = join(config.MONGODB_URI ? process.cwd() : await findProjectRoot(), '.data', 'webhook-secret.key');
  webhookKey = await loadWebhookSecretKey({ configured: config.MQ_WEBHOOK_SECRET_KEY, keyFile, log });
} catch (error) {
  log.fatal({ err: error }, 'no key for webhook secrets');
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
const outgoing = composeOutgoingWebhooks({
  store: database.stores.webhooks,
  key: webhookKey,
  allowPrivate: config.MQ_WEBHOOK_ALLOW_PRIVATE,
  timeoutMs: config.MQ_WEBHOOK_TIMEOUT_MS,
  pollMs: config.MQ_WEBHOOK_POLL_MS,
  log,
  metrics,
});
if (config.MQ_WEBHOOK_ALLOW_PRIVATE) log.warn('MQ_WEBHOOK_ALLOW_PRIVATE is on: outgoing webhooks may use http and reach private, loopback and link-local addresses');
const github =
  config.APP_ID && config.PRIVATE_KEY && config.WEBHOOK_SECRET
    ? setupGitHub(
        {
          appId: config.APP_ID,
          privateKey: config.PRIVATE_KEY,
          webhookSecret: config.WEBHOOK_SECRET,
          metrics,
          ...(config.GHE_HOST ? { gheHost: config.GHE_HOST } : {}),
          ...(config.GITHUB_API_URL ? { baseUrl: config.GITHUB_API_URL } : {}),
        },
        database.stores,
        log,
      )
    : undefined;
const { gitHosts, runner, sandbox, maintenance, events } = composeQueueServices({
  stores: database.stores,
  log,
  sandbox: config.MQ_SANDBOX,
  owner: `${hostname()}:${config.PORT}`,
  leaseTtlMs: config.MQ_QUEUE_LEASE_MS,
  metrics,
  outbox: outgoing.outbox,
  ...(github ? { hosts: { [github.hostName]: github.host }, maintenanceTasks: github.maintenanceTasks } : {}),
});
github?.bindEvents(events);
log.info(
  { sandbox: config.MQ_SANDBOX },
  config.MQ_SANDBOX ? 'sandbox host on: repositories on host "sandbox" are simulated' : 'sandbox host off',
);
if (github) log.info({ host: github.hostName }, 'GitHub App configured: webhooks at /api/github/webhooks');
else log.info('GitHub App not configured (set APP_ID, PRIVATE_KEY or PRIVATE_KEY_PATH, and WEBHOOK_SECRET): API and sandbox only');

const app = await buildServer({
  stores: database.stores,
  gitHosts,
  runner,
  sandbox,
  logger: log,
  metrics,
  outgoingWebhooks: outgoing.service,
  ...(config.MQ_OPERATOR_TOKEN ? { operatorToken: config.MQ_OPERATOR_TOKEN } : {}),
  ...(config.MQ_TRUST_PROXY_HOPS ? { trustProxyHops: config.MQ_TRUST_PROXY_HOPS } : {}),
  ...(github ? { webhooks: (deps: ApiDeps) => github.webhooks(deps, events) } : {}),
});
await app.listen({ port: config.PORT, host: config.HOST });

// Operator metrics: behind a token on the main port, or open on a port of their own.
const metricsServer = config.MQ_METRICS_PORT ? Fastify({ loggerInstance: log }) : undefined;
if (metricsServer && config.MQ_METRICS_PORT) {
  await metricsServer.register(operatorMetricsRoute({ metrics, stores: database.stores }));
  await metricsServer.listen({ port: config.MQ_METRICS_PORT, host: config.HOST });
}
if (!config.MQ_OPERATOR_TOKEN && !config.MQ_METRICS_PORT) log.info('operator metrics off: set MQ_OPERATOR_TOKEN or MQ_METRICS_PORT to serve GET /metrics');
// Resume every queue: replay persisted actions, re-arm timers, re-ask hosts for runs in flight.
await runner.start();
maintenance.start(15_000);
outgoing.worker.start();

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down: finishing in-flight requests');
  // A stuck close must not keep a terminating pod alive forever.
  const force = setTimeout(() => process.exit(1), 10_000);
  force.unref();
  try {
    maintenance.stop();
    await metricsServer?.close();
    await app.close();
    // Attempts still running after 5 s are left to their claims' expiry: repeated later, same webhook-id.
    await outgoing.worker.stop({ graceMs: 5_000 });
    await database.close();
    process.exit(0);
  } catch (error) {
    log.error({ err: error }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
