import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../../ports/webhook-outbox.js';
import { WEBHOOK_DELIVERY_STATUSES } from '../../ports/webhook-store.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../../webhooks/url-safety.js';
import { integer, lowerCaseEnum, repoSchema } from './common.js';

/** Outgoing webhook subscriptions: requests and views. Secrets appear only in create and rotate answers. */

const eventType = lowerCaseEnum(WEBHOOK_EVENT_TYPES);
const eventTypes = z.array(eventType).min(1).max(50);
const webhookId = z.string().min(1).max(100).describe('The webhook id, as createWebhook answered it (wh_...).');
const url = z
  .string()
  .min(1)
  .max(MAX_WEBHOOK_URL_LENGTH)
  .describe('Where deliveries are POSTed: https, resolving to public addresses only (unless the operator allows private ones).');
const description = z.string().max(500);

export const createWebhookRequest = z.object({
  url,
  eventTypes: eventTypes.optional().describe('The event types to deliver; absent: every type, including ones added later.'),
  description: description.optional(),
  repo: repoSchema.optional().describe("Only this repository's events; absent: every repository of the token's organization."),
});

export const updateWebhookRequest = z.object({
  id: webhookId,
  url: url.optional(),
  eventTypes: eventTypes.nullable().optional().describe('null: every event type.'),
  description: description.nullable().optional(),
  enabled: z.boolean().optional().describe('true re-enables a disabled webhook and forgets its failures; false disables it.'),
});

export const webhookIdRequest = z.object({ id: webhookId });

export const listWebhooksRequest = z.object({});

export const rotateWebhookSecretRequest = z.object({
  id: webhookId,
  graceMinutes: integer(0, 10080)
    .optional()
    .describe('How long the previous secret keeps signing alongside the new one (default 1440, a day; at most a week).'),
});

export const listWebhookDeliveriesRequest = z.object({
  id: webhookId,
  take: integer(1, 100).optional(),
  cursor: z.string().min(1).max(200).optional(),
});

export const redeliverWebhookRequest = z.object({
  id: webhookId,
  deliveryId: z.string().min(1).max(100),
});

const dateTime = z.string();

export const webhookView = z.object({
  id: z.string(),
  org: z.object({ host: z.string(), owner: z.string() }),
  repo: repoSchema.nullable(),
  url: z.string(),
  eventTypes: z.array(z.enum(WEBHOOK_EVENT_TYPES)).nullable().describe('null: every event type.'),
  description: z.string().nullable(),
  disabled: z.boolean(),
  disabledReason: z.string().nullable(),
  disabledAt: dateTime.nullable(),
  failingSince: dateTime.nullable().describe('Start of the current run of failed attempts; null after a success.'),
  consecutiveFailures: z.number(),
  previousSecretExpiresAt: dateTime.nullable().describe('While a rotated-out secret still signs: when it stops.'),
  createdAt: dateTime,
  updatedAt: dateTime,
});

const signingSecret = z.string().describe('The signing secret (whsec_...): shown this once, never again.');

export const createWebhookResponse = z.object({ webhook: webhookView, secret: signingSecret });
export const listWebhooksResponse = z.object({ webhooks: z.array(webhookView) });
export const deleteWebhookResponse = z.object({ deleted: z.literal(true), id: z.string() });
export const rotateWebhookSecretResponse = z.object({ webhook: webhookView, secret: signingSecret, previousSecretExpiresAt: dateTime });

export const webhookDeliveryView = z.object({
  id: z.string(),
  eventId: z.string().describe('Also the webhook-id header: the same on every attempt.'),
  eventType: z.enum(WEBHOOK_EVENT_TYPES),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES),
  attempts: z.number(),
  lastResponseCode: z.number().nullable(),
  lastError: z.string().nullable(),
  lastAttemptAt: dateTime.nullable(),
  nextAttemptAt: dateTime.nullable(),
  deliveredAt: dateTime.nullable(),
  createdAt: dateTime,
});

export const listWebhookDeliveriesResponse = z.object({ deliveries: z.array(webhookDeliveryView), nextCursor: z.string().optional() });
