import { queueFileJsonSchema } from '../queue-file/queue-file-schema.js';
import { EnqueuedEntriesCache } from '../queue/enqueued-cache.js';
import { PullRequestStatusCache } from '../queue/status-cache.js';
import { randomUUID } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { GitHostRegistry } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import { pullRequestService } from '../queue/pull-request-service.js';
import { queueService } from '../queue/queue-service.js';
import { tokenService } from '../tokens/token-service.js';
import { forbidOtherOrganizations, registerTokenAuth, API_TOKEN_HEADER } from './auth.js';
import type { ApiDeps } from './deps.js';
import { registerErrorHandling, sendError } from './errors.js';
import { healthRoutes } from './routes/health-routes.js';
import { sessionRoutes } from './routes/session-routes.js';
import { dashboardPlugin } from '../dashboard/dashboard-plugin.js';
import { dashboardRoutes } from '../dashboard/dashboard-routes.js';
import { LiveUpdates } from '../dashboard/live-updates.js';
import { sandboxDemoRoutes } from '../dashboard/sandbox-demo.js';
import { pullRequestRoutes } from './routes/pull-request-routes.js';
import { queueRoutes } from './routes/queue-routes.js';
import { testingAndMetricsRoutes } from './routes/testing-and-metrics-routes.js';
import { sandboxRoutes } from './routes/sandbox-routes.js';
import { webhookRoutes } from './routes/webhook-routes.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import type { SandboxHost } from '../adapters/sandbox/sandbox-host.js';
import { QueueRunner } from '../runner/queue-runner.js';
import { operatorMetricsRoute, recordHttpLatency } from '../observability/operator-routes.js';
import type { ServiceMetrics } from '../observability/service-metrics.js';

/** The seed's body limit for every v1 endpoint. */
export const BODY_LIMIT_BYTES = 20 * 1024 * 1024;
export const API_VERSION = '1.0.0';

declare module 'fastify' {
  interface FastifyInstance {
    /** The queues' writer (one per server). */
    queueRunner: QueueRunner;
  }
}

export interface BuildServerOptions {
  stores: Stores;
  gitHosts: GitHostRegistry;
  /**
   * How old the views' cache of enqueued entries may get (EnqueuedEntriesCache maxAgeMs); tests that write entries
   * beneath the runner, which no one else does, set 0.
   */
  enqueuedCacheMaxAgeMs?: number;
  /** The queues' writer; built here from stores and hosts when not given. */
  runner?: QueueRunner;
  /** Serves /sandbox/* when given. */
  sandbox?: SandboxHost;
  /** The GitHub webhook route, built from the API's use cases (so both share them). */
  webhooks?: (deps: ApiDeps) => Promise<FastifyPluginAsync>;
  /** Outgoing webhook subscriptions (createWebhook and the rest); those endpoints exist only when given. */
  outgoingWebhooks?: WebhookService;
  /** The service's own metrics: HTTP latency is recorded when given. */
  metrics?: ServiceMetrics;
  /** Serve GET /metrics on this server, behind this operator token. */
  operatorToken?: string;
  /** The service's pino logger; none in tests. */
  logger?: FastifyBaseLogger;
  now?: () => Date;
  /** How long a dashboard sign-in session lasts (default 12 h). */
  sessionLifetimeMs?: number;
  /** How often the dashboard's live stream looks for changed queues (default 1 s). */
  livePollMs?: number;
  /** Where the built dashboard is (default dist/ui). */
  uiRoot?: string;
  /** Proxy hops whose X-Forwarded-* headers are trusted (a TLS proxy in front: the session cookie is then Secure). */
  trustProxyHops?: number;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** JSON bodies only, a valid token (checked before the body is read), and only the token's organization. */
function protect(scope: FastifyInstance, deps: ApiDeps): void {
  // Only JSON bodies: anything else is a 415, not a string for the schema to reject.
  scope.removeContentTypeParser('text/plain');
  registerTokenAuth(scope, deps);
  // Runs after validation, so `repo` is known to be well-formed.
  scope.addHook('preHandler', async (request, reply) => {
    const repo = (request.body as { repo?: { host: string; owner: string; name: string } } | undefined)?.repo;
    if (repo && forbidOtherOrganizations(request, reply, repo)) return reply;
  });
}

/** How long a request may take to arrive, headers and body (a 25 MiB webhook over a slow link is well inside it). */
export const REQUEST_TIMEOUT_MS = 60_000;

/** Builds the HTTP server (not listening): tests drive it with inject, main.ts listens. */
export async function buildServer(options: BuildServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    bodyLimit: BODY_LIMIT_BYTES,
    // A request must arrive whole within this (Fastify's default is no limit): a caller dripping a body holds no socket
    // for good. Answers are not timed (the dashboard's live updates stream for as long as they are watched).
    requestTimeout: REQUEST_TIMEOUT_MS,
    // The nearest N hops (Fastify counts from 0): X-Forwarded-Proto from them is believed.
    ...(options.trustProxyHops ? { trustProxy: (_address: string, hop: number) => hop < (options.trustProxyHops as number) } : {}),
    // Prototype-poisoning keys are dropped like any unknown field, never applied.
    onProtoPoisoning: 'remove',
    onConstructorPoisoning: 'remove',
    // Malformed URLs and the like: plain text like every other error.
    frameworkErrors: (error, _request, reply) => {
      if (error.code === 'FST_ERR_BAD_URL') return sendError(reply, 400, 'The URL is not valid.');
      return sendError(reply, 400, 'The request is not valid HTTP for this service.');
    },
    // Keep a caller's request id (proxies set one) so logs line up across hops.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app, BODY_LIMIT_BYTES);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  if (options.metrics) recordHttpLatency(app, options.metrics);
  if (options.metrics && options.operatorToken) {
    await app.register(operatorMetricsRoute({ metrics: options.metrics, stores: options.stores, operatorToken: options.operatorToken, enqueuedCount: (queueId) => enqueuedCache.count(options.stores, queueId) }));
  }

  const now = options.now ?? (() => new Date());
  const log = app.log;
  const runner = options.runner ?? new QueueRunner({ stores: options.stores, hosts: options.gitHosts, log, now: () => now().getTime() });
  app.decorate('queueRunner', runner);
  app.addHook('onClose', async () => runner.stop());
  const enqueuedCache = new EnqueuedEntriesCache(options.enqueuedCacheMaxAgeMs !== undefined ? { maxAgeMs: options.enqueuedCacheMaxAgeMs } : {});
  // Views of a queue this replica writes follow its decisions instead of reading every entry after each.
  runner.onRecorded((change) => void enqueuedCache.recorded(options.stores, change));
  // Status polls of PRs in queues this replica writes are answered from memory, forgotten as decisions change them.
  const statusCache = new PullRequestStatusCache(runner, (entryId) => options.stores.entries.lastWritten(entryId));
  runner.onRecorded((change) => statusCache.recorded(change));
  const deps: ApiDeps = {
    stores: options.stores,
    tokens: tokenService(options.stores.tokens, now),
    queues: queueService(options.stores, runner, options.gitHosts, now),
    pullRequests: pullRequestService(options.stores, options.gitHosts, runner, log, now, statusCache),
    runner,
    now,
    enqueuedCache,
  };

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Merge queue API', version: API_VERSION, description: 'The v1 merge queue API: queues, pull requests, testing details and metrics.' },
      servers: [],
      components: { securitySchemes: { apiToken: { type: 'apiKey', in: 'header', name: API_TOKEN_HEADER } } },
      security: [{ apiToken: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });

  await app.register(healthRoutes(options.stores));
  // Dashboard sign-in: the session cookie stands for an organization token on /v1 and /sandbox.
  await app.register(fastifyCookie);
  await app.register(sessionRoutes(deps, { lifetimeMs: options.sessionLifetimeMs }));
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // The queue file's JSON Schema, for editors: `# yaml-language-server: $schema=<this service>/schemas/merge-queue.schema.json`.
  const queueFileSchemaJson = queueFileJsonSchema();
  app.get('/schemas/merge-queue.schema.json', { schema: { hide: true } }, async () => queueFileSchemaJson);

  await app.register(
    async (v1) => {
      protect(v1, deps);
      await v1.register(queueRoutes(deps));
      await v1.register(pullRequestRoutes(deps));
      await v1.register(testingAndMetricsRoutes(deps));
      await v1.register(dashboardRoutes(deps));
      if (options.outgoingWebhooks) await v1.register(webhookRoutes(options.outgoingWebhooks));
    },
    { prefix: '/v1' },
  );
  if (options.webhooks) await app.register(await options.webhooks(deps));
  const live = new LiveUpdates(options.stores, options.livePollMs, log);
  app.addHook('onClose', async () => live.stop());
  await app.register(dashboardPlugin(deps, live, { sandbox: Boolean(options.sandbox), ...(options.uiRoot ? { uiRoot: options.uiRoot } : {}) }));
  const sandbox = options.sandbox;
  if (sandbox) {
    app.addHook('onClose', async () => sandbox.stop());
    await app.register(
      async (scope) => {
        protect(scope, deps);
        await scope.register(sandboxRoutes(sandbox));
        await scope.register(sandboxDemoRoutes(deps, sandbox));
      },
      { prefix: '/sandbox' },
    );
  }
  return app;
}
