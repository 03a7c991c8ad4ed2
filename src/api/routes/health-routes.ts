import type { FastifyPluginAsync } from 'fastify';
import type { Stores } from '../../ports/stores.js';
import { sendError } from '../errors.js';

/** Liveness (the process answers), readiness (the database answers) and Probot's GET /ping. */
export function healthRoutes(stores: Stores): FastifyPluginAsync {
  return async (app) => {
    app.get('/healthz', { schema: { hide: true }, logLevel: 'warn' }, async () => ({ status: 'ok' }));
    // Probot's convention, for monitors set up for a Probot app: no token, plain text.
    app.get('/ping', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => reply.type('text/plain; charset=utf-8').send('PONG'));
    app.get('/readyz', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => {
      // A store that throws instead of answering false is just as unready: 503, not 500.
      const ready = await stores.ping().catch(() => false);
      if (ready) return { status: 'ready' };
      return sendError(reply, 503, 'The database is not reachable.');
    });
  };
}
