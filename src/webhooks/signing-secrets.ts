import type { StoredSigningSecret, WebhookSubscriptionRecord } from '../ports/webhook-store.js';
import type { SecretBox } from './secret-box.js';

/** At most this many secrets sign at once (repeated rotations within a grace period). */
export const MAX_LIVE_SECRETS = 5;

export function isLive(secret: StoredSigningSecret, now: Date): boolean {
  return secret.expiresAt === null || secret.expiresAt.getTime() > now.getTime();
}

/** The secrets that sign now, opened; `unreadable` counts those the key cannot open. */
export function openLiveSecrets(subscription: WebhookSubscriptionRecord, box: SecretBox, now: Date): { secrets: string[]; unreadable: number } {
  const secrets: string[] = [];
  let unreadable = 0;
  for (const stored of subscription.secrets) {
    if (!isLive(stored, now)) continue;
    const opened = box.open(stored.sealed, subscription.id);
    if (opened === null) unreadable += 1;
    else secrets.push(opened);
  }
  return { secrets, unreadable };
}

/**
 * After a rotation: the new secret is current, the previous current one signs
 * alongside until `now + graceMs`, older ones keep their own end, expired ones go.
 */
export function rotateSecrets(existing: StoredSigningSecret[], fresh: StoredSigningSecret, now: Date, graceMs: number): StoredSigningSecret[] {
  const graceEnd = new Date(now.getTime() + graceMs);
  const previous = existing
    .map((s) => (s.expiresAt === null ? { ...s, expiresAt: graceEnd } : s))
    .filter((s) => isLive(s, now))
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
    .slice(0, MAX_LIVE_SECRETS - 1);
  return [fresh, ...previous];
}

/** When the last previous secret stops signing, or null when only the current one signs. */
export function previousSecretsExpireAt(secrets: StoredSigningSecret[], now: Date): Date | null {
  let latest: Date | null = null;
  for (const s of secrets) {
    if (s.expiresAt !== null && isLive(s, now) && (latest === null || s.expiresAt > latest)) latest = s.expiresAt;
  }
  return latest;
}
