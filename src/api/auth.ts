import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiTokenRecord } from '../domain/records.js';
import type { RepoRef } from '../domain/repo.js';
import { tokenCovers, type TokenService } from '../tokens/token-service.js';
import { sendError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The organization token that authenticated this request. */
    apiToken: ApiTokenRecord | null;
  }
}

export const API_TOKEN_HEADER = 'x-api-token';

/**
 * Checks `x-api-token` in onRequest, before any body is read, so a caller
 * without a valid token cannot make the server parse 20 MiB.
 */
export function registerTokenAuth(app: FastifyInstance, tokens: TokenService): void {
  app.decorateRequest('apiToken', null);
  app.addHook('onRequest', async (request, reply) => {
    const header = request.headers[API_TOKEN_HEADER];
    const secret = Array.isArray(header) ? header[0] : header;
    if (!secret) return sendError(reply, 401, `The ${API_TOKEN_HEADER} header is missing.`);
    const token = await tokens.authenticate(secret.trim());
    if (!token) return sendError(reply, 401, `The ${API_TOKEN_HEADER} header does not hold a valid token (unknown or revoked).`);
    request.apiToken = token;
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
