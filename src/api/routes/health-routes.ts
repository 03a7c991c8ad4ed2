import type { FastifyPluginAsync } from 'fastify';
import type { Stores } from '../../ports/stores.js';
import { sendError } from '../errors.js';

/** Liveness (the process answers) and readiness (the database answers). */
export function healthRoutes(stores: Stores): FastifyPluginAsync {
  return async (app) => {
    app.get('/healthz', { schema: { hide: true }, logLevel: 'warn' }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => {
      if (await stores.ping()) return { status: 'ready' };
      return sendError(reply, 503, 'The database is not reachable.');
    });
  };
}
