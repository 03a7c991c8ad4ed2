import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { SessionRecord } from '../../ports/stores.js';
import { hashApiToken } from '../../tokens/api-token.js';
import { csrfMatches, CSRF_HEADER, hashSessionId, newCsrfToken, newSessionId, readSession, sessionCookieName, sessionCookieValue, type AuthDeps } from '../auth.js';
import { sendError } from '../errors.js';
import { createSessionRequest, sessionView } from '../schemas/session.js';

/** A session lasts 12 hours unless configured otherwise (no sliding renewal). */
export const DEFAULT_SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;

export interface SessionRouteOptions {
  /** How long a session lasts from sign-in. */
  lifetimeMs?: number;
}

/** A sign-in body holds only a token: anything larger is refused before it is read or parsed (no sign-in needed to send one). */
export const SESSION_BODY_LIMIT_BYTES = 4 * 1024;

/** The session cookie's attributes: HttpOnly, SameSite=Strict, the whole site, Secure when the request came over https (named with `__Host-` then: sessionCookieName). */
export function sessionCookieOptions(protocol: string, maxAgeSeconds: number) {
  return { httpOnly: true, sameSite: 'strict' as const, path: '/', maxAge: maxAgeSeconds, secure: protocol === 'https' };
}

function view(session: SessionRecord) {
  return { organization: { host: session.host, owner: session.owner }, csrfToken: session.csrfToken, expiresAt: session.expiresAt.toISOString() };
}

function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(sessionCookieName(request.protocol), sessionCookieOptions(request.protocol, 0));
}

/**
 * The dashboard's sign-in: POST /ui/session trades an organization token for an
 * HttpOnly, SameSite=Strict session cookie; GET reads the session; DELETE signs
 * out. Needs @fastify/cookie registered on the server.
 */
export function sessionRoutes(deps: AuthDeps, options: SessionRouteOptions = {}): FastifyPluginAsyncZod {
  const lifetimeMs = options.lifetimeMs ?? DEFAULT_SESSION_LIFETIME_MS;
  return async (app) => {
    // Only JSON bodies, as on /v1: a cross-site form cannot send one.
    app.removeContentTypeParser('text/plain');
    // The answers carry the CSRF token: never cached.
    app.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });

    // The server-wide error handler would name the server's limit: this one names the sign-in's; other errors go on to it.
    app.setErrorHandler((error: FastifyError, _request, reply) => {
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        return sendError(reply, 413, `The sign-in body is larger than the limit of ${SESSION_BODY_LIMIT_BYTES} bytes; send only {"token": "..."}.`);
      }
      throw error;
    });

    app.post('/ui/session', {
      bodyLimit: SESSION_BODY_LIMIT_BYTES,
      schema: { hide: true, body: createSessionRequest, response: { 200: sessionView } },
      handler: async (request, reply) => {
        const secret = request.body.token.trim();
        const token = await deps.tokens.authenticate(secret);
        if (!token) return sendError(reply, 401, 'The token is not valid (unknown or revoked); no session was started.');
        // A new sign-in replaces the session this browser had, if any.
        const previous = sessionCookieValue(request);
        if (previous) await deps.stores.sessions.delete(hashSessionId(previous));
        const sessionId = newSessionId();
        const createdAt = deps.now();
        const session: SessionRecord = {
          id: hashSessionId(sessionId),
          kind: 'api_token',
          subject: token.id,
          tokenHash: hashApiToken(secret),
          host: token.host,
          owner: token.owner,
          csrfToken: newCsrfToken(),
          createdAt,
          expiresAt: new Date(createdAt.getTime() + lifetimeMs),
        };
        await deps.stores.sessions.insert(session);
        reply.setCookie(sessionCookieName(request.protocol), sessionId, sessionCookieOptions(request.protocol, Math.max(1, Math.ceil(lifetimeMs / 1000))));
        return view(session);
      },
    });

    app.get('/ui/session', {
      schema: { hide: true, response: { 200: sessionView } },
      handler: async (request, reply) => {
        const found = await readSession(request, deps);
        if (!found) {
          if (sessionCookieValue(request) !== undefined) clearSessionCookie(request, reply);
          return sendError(reply, 401, 'No session: sign in with an organization token.');
        }
        return view(found.session);
      },
    });

    // Signing out of a session that has already ended just clears the cookie.
    app.delete('/ui/session', {
      schema: { hide: true },
      handler: async (request, reply) => {
        const found = await readSession(request, deps);
        if (found) {
          if (!csrfMatches(request, found.session)) {
            return sendError(reply, 403, `Signing out needs the ${CSRF_HEADER} header holding the session's CSRF token.`);
          }
          await deps.stores.sessions.delete(found.session.id);
        }
        clearSessionCookie(request, reply);
        return reply.code(204).send();
      },
    });
  };
}
