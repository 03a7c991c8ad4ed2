import type { RepoRef } from '../domain/repo.js';
import type { WebhookEventType } from '../ports/webhook-outbox.js';
import type { WebhookDeliveryRecord, WebhookDeliveryStatus, WebhookSubscriptionRecord } from '../ports/webhook-store.js';
import { previousSecretsExpireAt } from './signing-secrets.js';

/** A subscription as the API shows it: never a secret, sealed or not. */
export interface WebhookView {
  id: string;
  org: { host: string; owner: string };
  repo: RepoRef | null;
  url: string;
  eventTypes: WebhookEventType[] | null;
  description: string | null;
  disabled: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
  failingSince: string | null;
  consecutiveFailures: number;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One outbox row as the API shows it. */
export interface WebhookDeliveryView {
  id: string;
  eventId: string;
  eventType: WebhookEventType;
  status: WebhookDeliveryStatus;
  attempts: number;
  lastResponseCode: number | null;
  lastError: string | null;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

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
