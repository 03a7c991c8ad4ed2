import type { z } from 'zod';
import type { webhookDeliveryView as webhookDeliveryViewSchema, webhookView as webhookViewSchema } from '../api/schemas/webhooks.js';
import type { WebhookDeliveryRecord, WebhookSubscriptionRecord } from '../ports/webhook-store.js';
import { previousSecretsExpireAt } from './signing-secrets.js';

/** A subscription as the API shows it (never a secret, sealed or not): the response schema's type. */
export type WebhookView = z.infer<typeof webhookViewSchema>;

/** One outbox row as the API shows it. */
export type WebhookDeliveryView = z.infer<typeof webhookDeliveryViewSchema>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function webhookView(s: WebhookSubscriptionRecord, now: Date): WebhookView {
  return {
    id: s.id,
    org: { ...s.org },
    repo: s.repo ? { ...s.repo } : null,
    url: s.url,
    eventTypes: s.eventTypes ? [...s.eventTypes] : null,
    description: s.description,
    disabled: s.disabledReason !== null,
    disabledReason: s.disabledReason,
    disabledAt: iso(s.disabledAt),
    failingSince: iso(s.failingSince),
    consecutiveFailures: s.consecutiveFailures,
    previousSecretExpiresAt: iso(previousSecretsExpireAt(s.secrets, now)),
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

export function deliveryView(d: WebhookDeliveryRecord): WebhookDeliveryView {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    lastResponseCode: d.lastResponseCode,
    lastError: d.lastError,
    lastAttemptAt: iso(d.lastAttemptAt),
    nextAttemptAt: iso(d.nextAttemptAt),
    deliveredAt: iso(d.deliveredAt),
    createdAt: d.createdAt.toISOString(),
  };
}
