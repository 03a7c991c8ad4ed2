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
import { startFakeGitHub, type ConcurrentDelivery, type FakeGitHub, type FakeGitHubOptions } from './fake-github/index.js';
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
  /**
   * The engine's view of a queue in one line, for a wait that timed out to explain itself; beside it, what
   * the database holds (each entry's state, last recorded key = decision version × 100,000 + place, and
   * attempt; how far the decision log is recorded and carried out), what the runner is busy with, and its
   * last warnings (a round that failed says so there). The engine's state changes in place before its
   * decision is stored and recorded: while a round is under way (runner.deciding) it is ahead of the database.
   */
  describeQueue(ref: { owner: string; name: string }, targetBranch?: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * `concurrentWebhooks`: deliver as GitHub does, overlapping and out of order, some lost or repeated if asked (see FakeWebhooks).
 * `reconcileMs`: how often results whose webhook was lost are read (production: every 2 minutes).
 * `redeliveryMs`: how often GitHub is asked again for deliveries that failed (production: every 5 minutes).
 * `fake`: GitHub's lags (reads of refs behind, mergeability unknown after pushes; see FakeGitHubOptions).
 * `maintenanceMs`: the service's periodic catch-up (facts GitHub had not computed yet,
 * lost results), as in production; 0 turns it off (the request budget counts only events).
 */
export async function startGitHubHarness(
  options: { concurrentWebhooks?: ConcurrentDelivery; maintenanceMs?: number; reconcileMs?: number; redeliveryMs?: number; fake?: Pick<FakeGitHubOptions, 'staleRefReadsMs' | 'mergeableUnknownAfterBasePush' | 'mergedMarkDelayMs'> } = {},
): Promise<GitHubHarness> {
  // The people who label PRs in these scenarios are the repository's writers; tests that need a reader say so.
  const fake = await startFakeGitHub({ defaultPermission: 'write', ...options.fake });
  const database = await createTestDatabaseUri('github');
  const stores = await openMongoStores({ uri: database.uri });
  const log = pino({ level: process.env.MQ_TEST_LOG ?? 'silent' });
  const metrics = new ServiceMetrics({ processMetrics: false });
  const github = setupGitHub(
    { appId: String(fake.app.id), privateKey, webhookSecret: SECRET, baseUrl: fake.baseUrl, tuning: { unitMs: 5, spaceWrites: false }, metrics, ...(options.reconcileMs ? { reconcileMs: options.reconcileMs } : {}), ...(options.redeliveryMs ? { redeliveryMs: options.redeliveryMs } : {}) },
    stores,
    log,
  );
  // The runner's last warnings, kept (not printed) for describeQueue.
  const warnings: string[] = [];
  const remember = (level: string, details: object, message: string) => {
    const { queueId, err } = details as { queueId?: string; err?: unknown };
    warnings.push(`${new Date().toISOString()} ${level} ${queueId ?? ''} ${message}${err ? `: ${err instanceof Error ? err.message : String(err)}` : ''}`);
    if (warnings.length > 10) warnings.shift();
  };
  const runnerLog = {
    info: (details: object, message: string) => log.info(details, message),
    warn(details: object, message: string) {
      remember('warn', details, message);
      log.warn(details, message);
    },
    error(details: object, message: string) {
      remember('error', details, message);
      log.error(details, message);
    },
  };
  const services = composeQueueServices({ stores, log: runnerLog, sandbox: false, hosts: { [github.hostName]: github.host }, maintenanceTasks: github.maintenanceTasks, pollMs: 100 });
  github.bindEvents(services.events);
  const app = await buildServer({ stores, gitHosts: services.gitHosts, runner: services.runner, webhooks: (deps) => github.webhooks(deps, services.events) });
  // Requests not answered yet, for a close that hangs to name them.
  const inFlight = new Map<string, string>();
  app.addHook('onRequest', async (request) => void inFlight.set(request.id, `${request.method} ${request.url} ${String(request.headers['x-github-event'] ?? '')}`));
  app.addHook('onResponse', async (request) => void inFlight.delete(request.id));
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  fake.webhooks.deliverTo({ url: `${address}/api/github/webhooks`, secret: SECRET, ...(options.concurrentWebhooks ? { concurrent: options.concurrentWebhooks } : {}) });
  await services.runner.start();
  if ((options.maintenanceMs ?? 1_000) > 0) services.maintenance.start(options.maintenanceMs ?? 1_000);
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
    async describeQueue(ref, targetBranch = 'main') {
      const queue = await stores.queues.find({ host: 'github.com', owner: ref.owner, name: ref.name }, targetBranch);
      const state = queue ? await services.runner.engineState(queue.id) : null;
      if (!queue || !state) return 'no queue';
      const { requestedState, baseSha, hostOutage, landingBlocked, awaitingBaseHead, mergingRunId, switchingToMode } = state;
      const runs = state.runs.map((r) => `${r.id}:${r.status}[${[...r.ahead, ...r.unit].map((u) => u.entryId).join(',')}]`);
      // Each entry's facts read (or not), its risk and place: what decides whether and where it starts.
      const entries = state.entries.map((e) => `${e.id}:${e.state}${e.facts ? '' : ':no-facts'}:risk=${e.risk ?? '-'}:place=${e.place ?? '-'}`);
      const { mode, concurrency, tuning, batch } = state.config;
      const stored = await Promise.all(
        state.entries.map(async (e) => {
          const entry = await stores.entries.findById(e.id);
          return entry ? `${e.id}:${entry.state}@${entry.recordedKey}#${entry.attempt}` : `${e.id}:missing`;
        }),
      );
      const cursors = await stores.engine.cursors(queue.id);
      const unrecorded = (await stores.engine.decisionsAfter(queue.id, cursors.recordedThrough, 100)).map((d) => d.version);
      const database = { entries: stored, ...cursors, unrecorded };
      const runner = { ...services.runner.activity(), warnings };
      return JSON.stringify({ config: { mode, concurrency, tuning, batch }, probes: state.probes?.length ?? 0, requestedState, baseSha, hostOutage, landingBlocked, awaitingBaseHead, mergingRunId, switchingToMode, runs, entries, database, runner });
    },
    async close() {
      // A slow close says which step it is in (a teardown that hangs should explain itself too).
      const started = Date.now();
      let step = 'the service (runner, in-flight actions)';
      const slow = setInterval(() => process.stderr.write(`github harness: closing ${step} for ${Date.now() - started} ms; runner busy with ${JSON.stringify(services.runner.activity())}; requests in flight: ${JSON.stringify([...inFlight.values()])}\n`), 5_000);
      try {
        services.maintenance.stop();
        // A socket the fake's webhook client opened but sent no request on yet keeps Node's
        // server.close() waiting until headersTimeout (a minute); closeIdleConnections does not
        // count it as idle. Seen under load, with the runner idle and no request in flight: cut it.
        const cut = setTimeout(() => app.server.closeAllConnections(), 3_000);
        await app.close();
        clearTimeout(cut);
        step = 'the fake GitHub';
        await fake.close();
        step = 'the database';
        await stores.close();
        await dropTestDatabase(database);
        await stopTestServer();
      } finally {
        clearInterval(slow);
      }
    },
  };
}

/** The problems `getQueue` lists for the queue of `ref`'s main branch, once it lists any (20 s at most). */
export async function problemsOnceAny(h: GitHubHarness, ref: object): Promise<Array<{ kind: string; message: string }>> {
  let problems: Array<{ kind: string; message: string }> = [];
  await h.fake.waitFor(
    async () => {
      problems = (await h.api('/v1/getQueue', { repo: ref, targetBranch: 'main' })).json().problems as typeof problems;
      return problems.length > 0;
    },
    { timeoutMs: 20_000, message: 'the queue to report a problem' },
  );
  return problems;
}
