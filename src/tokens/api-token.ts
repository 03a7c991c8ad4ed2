import { createHash, randomBytes } from 'node:crypto';

/**
 * Organization API tokens. The prefix lets secret scanners recognise a leaked
 * token; 32 random bytes make a fast hash safe to store (no dictionary to try),
 * so lookups are one indexed equality on the SHA-256.
 */
export const TOKEN_PREFIX = 'mq_';
const TOKEN_PATTERN = /^mq_[A-Za-z0-9_-]{43}$/;

export function generateApiToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Cheap shape check before touching the database. */
export function looksLikeApiToken(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

/** What listings show of a token: enough to recognise it, useless to an attacker. */
export function displayPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 6);
}
