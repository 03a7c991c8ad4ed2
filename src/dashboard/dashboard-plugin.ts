import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';
import { authenticateRequest } from '../api/auth.js';
import type { ApiDeps } from '../api/deps.js';
import { sendError } from '../api/errors.js';
import type { LiveUpdates } from './live-updates.js';

const here = dirname(fileURLToPath(import.meta.url));
/** Where `npm run build` puts the dashboard: dist/ui, next to dist/dashboard (or seen from the sources, in tests). */
export const DEFAULT_UI_ROOT = [join(here, '..', 'ui'), join(here, '..', '..', 'dist', 'ui')].find((dir) => existsSync(join(dir, 'index.html'))) ?? join(here, '..', 'ui');

/**
 * The dashboard loads only its own files (the build has no inline script) and talks only to its own origin; no
 * page may frame it. Styles set from script (charts) are allowed inline.
 */
const DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** A comment line now and then keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
/**
 * Live streams open at once per token (its sessions' included): a team may share one organization token, each with a
 * few tabs, but one credential must not hold sockets and heartbeat reads without end (found by review).
 */
export const MAX_STREAMS_PER_TOKEN = 100;

/**
 * The dashboard: its pages (built files, same origin, nothing from a CDN) at /,
 * and GET /ui/live, a Server-Sent Events stream that says which of the
 * organization's queues changed; pages then read what they show. Reads only:
 * a session cookie (or an x-api-token header) is enough, no CSRF token.
 */
export function dashboardPlugin(deps: ApiDeps, live: LiveUpdates, options: { sandbox: boolean; uiRoot?: string; heartbeatMs?: number; maxStreamsPerToken?: number }): FastifyPluginAsync {
  const uiRoot = options.uiRoot ?? DEFAULT_UI_ROOT;
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  return async (app) => {
    // What the pages may offer: the demo button only where the sandbox is on.
    app.get('/ui/config', { schema: { hide: true } }, async () => ({ sandbox: options.sandbox }));

    const open = new Set<() => void>();
    const streamsOf = new Map<string, number>();
    // An organization's queues, listed once per heartbeat however many of its streams look (found by review: one listing
    // per stream made the cost follow the open pages).
    const listed = new Map<string, { at: number; queues: Promise<Array<{ id: string }>> }>();
    const orgQueues = (host: string, owner: string) => {
      const key = `${host}\n${owner}`;
      const known = listed.get(key);
      if (known && Date.now() - known.at < heartbeatMs) return known.queues;
      const queues = deps.stores.queues.listForOrg(host, owner);
      queues.catch(() => listed.delete(key));
      if (listed.size > 10_000) listed.clear();
      listed.set(key, { at: Date.now(), queues });
      return queues;
    };
    // A server shutting down ends open streams instead of waiting for them: before in-flight requests are waited for
    // (preClose), since a stream is one that never completes by itself (onClose came after that wait, and never).
    app.addHook('preClose', async () => {
      for (const end of [...open]) end();
    });

    app.get('/ui/live', { schema: { hide: true } }, async (request, reply) => {
      const socket = request.raw.socket;
      const token = await authenticateRequest(request, deps);
      if (!token) return sendError(reply, 401, 'Sign in first: a session cookie or an x-api-token header is needed.');
      if ((streamsOf.get(token.id) ?? 0) >= (options.maxStreamsPerToken ?? MAX_STREAMS_PER_TOKEN)) {
        return sendError(reply, 429, `This token has ${options.maxStreamsPerToken ?? MAX_STREAMS_PER_TOKEN} live streams open already (dashboard tabs, its sessions' included): close some, then reload.`);
      }
      streamsOf.set(token.id, (streamsOf.get(token.id) ?? 0) + 1);
      let counted = true;
      const uncount = () => {
        if (!counted) return;
        counted = false;
        const left = (streamsOf.get(token.id) ?? 1) - 1;
        if (left > 0) streamsOf.set(token.id, left);
        else streamsOf.delete(token.id);
      };
      // Counted from here: a client gone while the versions are read below is no stream.
      request.raw.once('close', uncount);
      socket.once('close', uncount);
      const queues = await deps.stores.queues.listForOrg(token.host, token.owner);
      // Read before `hello`, on which pages read their views: a change after this is told, however soon.
      const since = await live.versions(queues.map((q) => q.id));
      reply.hijack();
      // Gone before or while those were read: no event of it comes again. An EventSource never half-closes, so the
      // end of what it sends counts too (some Node versions keep the socket open for the answer after it).
      if (socket.destroyed || socket.readableEnded) {
        uncount();
        socket.destroy();
        return;
      }
      const stream = reply.raw;
      stream.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      // Browsers reconnect by themselves after this long when the stream breaks.
      stream.write('retry: 3000\n\n');
      stream.write(`event: hello\ndata: ${JSON.stringify({ queues: queues.map((q) => q.id) })}\n\n`);
      const tell = (change: { queueId: string; version: number }) => stream.write(`event: queue\ndata: ${JSON.stringify(change)}\n\n`);
      // Per queue, so one created or deleted later is watched or forgotten alone.
      const watching = new Map(queues.map((q) => [q.id, live.watch([q.id], tell, since)]));
      // Queues created or deleted since the stream began (found by review: the queue list never showed a queue created
      // after it connected): looked for at each heartbeat in the organization's shared listing, told as a change of each.
      let following = false; // a slow listing is not overlapped by the next heartbeat's
      const followQueues = async () => {
        if (following) return;
        following = true;
        try {
          await followQueuesNow();
        } finally {
          following = false;
        }
      };
      const followQueuesNow = async () => {
        const now = await orgQueues(token.host, token.owner);
        const ids = new Set(now.map((q) => q.id));
        const added = [...ids].filter((id) => !watching.has(id));
        const removed = [...watching.keys()].filter((id) => !ids.has(id));
        if (!open.has(end)) return;
        for (const queueId of removed) {
          watching.get(queueId)?.();
          watching.delete(queueId);
          tell({ queueId, version: -1 });
        }
        if (added.length === 0) return;
        const versions = await live.versions(added);
        if (!open.has(end)) return;
        for (const queueId of added) {
          watching.set(queueId, live.watch([queueId], tell, versions));
          tell({ queueId, version: versions.get(queueId) ?? 0 });
        }
      };
      const stopWatching = () => {
        for (const stop of watching.values()) stop();
        watching.clear();
      };
      // Each heartbeat checks the credential again: a sign-out, an expired session or a revoked token ends the stream.
      const heartbeat = setInterval(() => {
        authenticateRequest(request, deps).then(
          (still) => {
            if (!still) return end();
            stream.write(': still here\n\n');
            return followQueues().catch((error: unknown) => request.log.warn({ err: error }, 'live updates: listing the queues failed; tried again next heartbeat'));
          },
          () => stream.write(': still here\n\n'),
        );
      }, heartbeatMs);
      heartbeat.unref();
      const end = () => {
        uncount();
        if (!open.delete(end)) return;
        clearInterval(heartbeat);
        stopWatching();
        stream.end();
      };
      open.add(end);
      request.raw.on('close', end);
      socket.once('close', end);
      socket.once('end', end);
    });

    if (existsSync(join(uiRoot, 'index.html'))) {
      await app.register(fastifyStatic, {
        root: uiRoot,
        prefix: '/',
        wildcard: false,
        index: 'index.html',
        setHeaders: (res) => {
          res.setHeader('content-security-policy', DASHBOARD_CSP);
          res.setHeader('x-frame-options', 'DENY');
        },
      });
    } else {
      app.get('/', { schema: { hide: true } }, async (_request, reply) =>
        sendError(reply, 503, 'The dashboard is not built: run `npm run build` (it builds the API and the dashboard).'),
      );
    }
  };
}
