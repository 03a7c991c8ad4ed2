import { orgKey } from '../domain/repo.js';
import type { ApiTokenRecord } from '../domain/records.js';
import type { ApiTokenStore } from '../ports/stores.js';
import { displayPrefix, generateApiToken, hashApiToken, looksLikeApiToken } from './api-token.js';

/** Issues, checks and revokes organization tokens; the secret exists only in `create`'s answer. */
export function tokenService(store: ApiTokenStore, now: () => Date = () => new Date()) {
  return {
    async create(org: { host: string; owner: string; name?: string }): Promise<{ token: string; record: ApiTokenRecord }> {
      const token = generateApiToken();
      const record = await store.insert({
        tokenHash: hashApiToken(token),
        prefix: displayPrefix(token),
        host: org.host.toLowerCase(),
        owner: org.owner,
        name: org.name ?? `${org.owner} token`,
        createdAt: now(),
      });
      return { token, record };
    },
    /** The live token this secret names, or null (unknown, malformed or revoked). */
    async authenticate(secret: string): Promise<ApiTokenRecord | null> {
      if (!looksLikeApiToken(secret)) return null;
      return store.findActiveByHash(hashApiToken(secret));
    },
    list: () => store.list(),
    revoke: (id: string) => store.revoke(id, now()),
  };
}

export type TokenService = ReturnType<typeof tokenService>;

/** Whether a token may act on repositories of this host and owner. */
export function tokenCovers(token: ApiTokenRecord, host: string, owner: string): boolean {
  return orgKey(token.host, token.owner) === orgKey(host, owner);
}
