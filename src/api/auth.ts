import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiTokenRecord } from '../domain/records.js';
import type { RepoRef } from '../domain/repo.js';
import type { SessionRecord, Stores } from '../ports/stores.js';
import { tokenCovers, type TokenService } from '../tokens/token-service.js';
import { sendError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The organization token that authenticated this request (directly, or through a dashboard session). */
    apiToken: ApiTokenRecord | null;
  }
}

export const API_TOKEN_HEADER = 'x-api-token';
/** The dashboard session cookie: a random id (32 bytes, base64url); the database keeps only its SHA-256. */
export const SESSION_COOKIE = 'mq_session';
/**
 * Its name over https. The `__Host-` prefix makes browsers take it only from this host, Secure, for the whole site and
 * with no Domain: a sibling subdomain (another app on *.example.com) cannot set or shadow it, so it cannot sign a
 * visitor in to a session of its choosing. Browsers allow the prefix only on Secure cookies, so plain http keeps the
 * plain name; a request over https reads only the prefixed one.
 */
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

/** The session cookie's name for a request that came over `protocol`. */
export function sessionCookieName(protocol: string): string {
  return protocol === 'https' ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

/** A session's requests that change something echo the session's CSRF token here. */
export const CSRF_HEADER = 'x-csrf-token';

/** What authentication reads: tokens and sessions, and the clock sessions expire by. */
export interface AuthDeps {
  tokens: TokenService;
  stores: Pick<Stores, 'tokens' | 'sessions'>;
  now: () => Date;
}

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** A new random session id, as the cookie holds it. */
export function newSessionId(): string {
  return randomBytes(32).toString('base64url');
}

/** A new random CSRF token for a session. */
export function newCsrfToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored key of a session: the SHA-256 hex of the cookie's id. */
export function hashSessionId(sessionId: string): string {
  return createHash('sha256').update(sessionId, 'utf8').digest('hex');
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The session cookie's value, parsed by @fastify/cookie when it ran, else from the header. */
export function sessionCookieValue(request: FastifyRequest): string | undefined {
  const name = sessionCookieName(request.protocol);
  const parsed = (request as { cookies?: Record<string, string | undefined> | null }).cookies;
  if (parsed) return parsed[name];
  const header = firstHeader(request.headers.cookie);
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The live session this request's cookie names, with the live token it was
 * created from; null when there is no cookie, or it is malformed, unknown,
 * expired, or its token was revoked (then the session is deleted).
 */
export async function readSession(request: FastifyRequest, deps: AuthDeps): Promise<{ session: SessionRecord; token: ApiTokenRecord } | null> {
  const sessionId = sessionCookieValue(request);
  if (!sessionId || !SESSION_ID.test(sessionId)) return null;
  const session = await deps.stores.sessions.find(hashSessionId(sessionId), deps.now());
  if (!session) return null;
  const token = session.kind === 'api_token' ? await deps.stores.tokens.findActiveByHash(session.tokenHash) : null;
  if (!token || token.id !== session.subject) {
    await deps.stores.sessions.delete(session.id);
    return null;
  }
  return { session, token };
}

/** Constant-time comparison of the request's CSRF header with the session's token. */
export function csrfMatches(request: FastifyRequest, session: SessionRecord): boolean {
  const given = firstHeader(request.headers[CSRF_HEADER]);
  if (!given) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(session.csrfToken));
}

type Credential =
  | { via: 'none' }
  | { via: 'header'; token: ApiTokenRecord | null }
  | { via: 'session'; found: { session: SessionRecord; token: ApiTokenRecord } | null };

/** `x-api-token` when the request has one (even empty), else the session cookie when it has one. */
async function credential(request: FastifyRequest, deps: AuthDeps): Promise<Credential> {
  const header = request.headers[API_TOKEN_HEADER];
  if (header !== undefined) {
    const secret = firstHeader(header);
    if (!secret) return { via: 'header', token: null };
    return { via: 'header', token: await deps.tokens.authenticate(secret.trim()) };
  }
  if (sessionCookieValue(request) === undefined) return { via: 'none' };
  return { via: 'session', found: await readSession(request, deps) };
}

/**
 * For routes that only read (e.g. a GET event stream): the token behind the
 * request's `x-api-token` header, or else behind its session cookie, without
 * any CSRF check; null when neither is valid. Sets `request.apiToken` too, so
 * `forbidOtherOrganizations` applies.
 */
export async function authenticateRequest(request: FastifyRequest, deps: AuthDeps): Promise<ApiTokenRecord | null> {
  const found = await credential(request, deps);
  const token = found.via === 'header' ? found.token : found.via === 'session' ? (found.found?.token ?? null) : null;
  request.apiToken = token;
  return token;
}

/**
 * Checks `x-api-token` in onRequest, before any body is read, so a caller
 * without a valid token cannot make the server parse 20 MiB. Without the
 * header, a dashboard session cookie stands for its token; then every request
 * but GET and HEAD must also carry the session's CSRF token in `x-csrf-token`.
 */
export function registerTokenAuth(app: FastifyInstance, deps: AuthDeps): void {
  app.decorateRequest('apiToken', null);
  app.addHook('onRequest', async (request, reply) => {
    const found = await credential(request, deps);
    switch (found.via) {
      case 'none':
        return sendError(reply, 401, `The ${API_TOKEN_HEADER} header is missing.`);
      case 'header':
        if (!found.token) return sendError(reply, 401, `The ${API_TOKEN_HEADER} header does not hold a valid token (unknown or revoked).`);
        request.apiToken = found.token;
        return;
      case 'session':
        if (!found.found) return sendError(reply, 401, `The ${sessionCookieName(request.protocol)} session has ended (signed out, expired or its token revoked); sign in again.`);
        if (!SAFE_METHODS.has(request.method) && !csrfMatches(request, found.found.session)) {
          return sendError(reply, 403, `A session request that changes something needs the ${CSRF_HEADER} header holding the session's CSRF token.`);
        }
        request.apiToken = found.found.token;
        return;
    }
  });
}

/** A token acts only on repositories of its own organization: else 403. */
export function forbidOtherOrganizations(request: FastifyRequest, reply: FastifyReply, repo: { host: string; owner: string } & Partial<RepoRef>): boolean {
  const token = request.apiToken;
  if (token && tokenCovers(token, repo.host, repo.owner)) return false;
  const where = repo.name ? `${repo.owner}/${repo.name} on ${repo.host}` : `${repo.owner} on ${repo.host}`;
  sendError(reply, 403, `This token belongs to ${token?.owner ?? 'another organization'} on ${token?.host ?? 'another host'} and cannot act on ${where}.`);
  return true;
}
