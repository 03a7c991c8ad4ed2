import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { sendError } from '../api/errors.js';
import type { Stores } from '../ports/stores.js';
import type { ServiceMetrics } from './service-metrics.js';

/** Records every request's latency under its route template (never the raw URL: bounded labels). */
export function recordHttpLatency(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequestDuration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * GET /metrics for operators: the service's own health in the text exposition
 * format. With an operator token it asks for `Authorization: Bearer <token>`;
 * on a separate metrics port (reachable only inside the deployment) it asks
 * for nothing.
 */
export function operatorMetricsRoute(options: {
  metrics: ServiceMetrics;
  stores: Stores;
  operatorToken?: string;
  /** How many PRs a queue holds, from the views' cache when it has the queue (counting reads every entry on the local FerretDB). */
  enqueuedCount?: (queueId: string) => Promise<number>;
}): FastifyPluginAsync {
  return async (app) => {
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      if (options.operatorToken) {
        const header = request.headers.authorization ?? '';
        const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
        if (!sameSecret(given, options.operatorToken)) return sendError(reply, 401, 'GET /metrics needs the operator token: Authorization: Bearer <MQ_OPERATOR_TOKEN>.');
      }
      await refreshQueueDepth(options);
      return reply.type(options.metrics.registry.contentType).send(await options.metrics.registry.metrics());
    });
  };
}

/** Queue depth is read at scrape time, so every replica reports the same truth. */
async function refreshQueueDepth(options: { metrics: ServiceMetrics; stores: Stores; enqueuedCount?: (queueId: string) => Promise<number> }): Promise<void> {
  options.metrics.queueDepth.reset();
  for (const queueId of await options.stores.engine.queueIds()) {
    const queue = await options.stores.queues.findById(queueId);
    if (!queue) continue;
    const name = `${queue.repo.host}/${queue.repo.owner}/${queue.repo.name}@${queue.targetBranch}`;
    options.metrics.queueDepth.set({ queue: name }, await (options.enqueuedCount?.(queueId) ?? options.stores.entries.countEnqueued(queueId)));
  }
}
