import { randomBytes } from 'node:crypto';
import { orgKey, type RepoRef } from '../domain/repo.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../ports/webhook-outbox.js';
import type { WebhookDeliveryChange, WebhookStore, WebhookSubscriptionChange, WebhookSubscriptionRecord } from '../ports/webhook-store.js';
import { conflict, invalid, notFound, succeed, unavailable, type Outcome } from '../queue/outcome.js';
import { generateSigningSecret, type SecretBox } from './secret-box.js';
import { rotateSecrets } from './signing-secrets.js';
import { DISABLED_BY_OWNER } from './endpoint-health.js';
import { checkWebhookUrl, type UrlPolicy } from './url-safety.js';
import { deliveryView, webhookView, type WebhookDeliveryView, type WebhookView } from './views.js';

/** The organization a request acts for: its token's host and owner. */
export interface Org {
  host: string;
  owner: string;
}

export const MAX_WEBHOOKS_PER_ORG = 50;
export const DEFAULT_GRACE_MINUTES = 1440;
export const DEFAULT_DELIVERY_PAGE = 20;

export interface WebhookServiceOptions {
  store: WebhookStore;
  secrets: SecretBox;
  urlPolicy: UrlPolicy;
  now?: () => Date;
  /** Told when a delivery became due now (a redelivery), so a worker need not wait for its poll. */
  onDue?: () => void;
}

/** The subscription endpoints' use cases; every one is scoped to the caller's organization. */
export function webhookService(options: WebhookServiceOptions) {
  const { store, secrets: box, urlPolicy } = options;
  const now = options.now ?? (() => new Date());

  /** Another organization's subscription is "not found" too: ids reveal nothing. */
  async function owned(org: Org, id: string): Promise<Outcome<WebhookSubscriptionRecord>> {
    const found = await store.findSubscription(id);
    if (!found || orgKey(found.org.host, found.org.owner) !== orgKey(org.host, org.owner)) {
      return notFound(`No webhook ${id} exists for ${org.owner} on ${org.host}.`);
    }
    return succeed(found);
  }

  async function checkedUrl(url: string): Promise<Outcome<string>> {
    const checked = await checkWebhookUrl(url, urlPolicy);
    if (checked.ok) return succeed(checked.url.toString());
    return checked.transient ? unavailable(`${checked.reason.replace(/\.$/, '')}; nothing was changed: try again.`) : invalid(checked.reason);
  }

  return {
    async create(
      org: Org,
      input: { url: string; eventTypes?: WebhookEventType[]; description?: string; repo?: RepoRef },
    ): Promise<Outcome<{ webhook: WebhookView; secret: string }>> {
      if (input.repo && orgKey(input.repo.host, input.repo.owner) !== orgKey(org.host, org.owner)) {
        return invalid(`The repository ${input.repo.owner}/${input.repo.name} does not belong to ${org.owner} on ${org.host}.`);
      }
      if ((await store.countSubscriptions(org.host, org.owner)) >= MAX_WEBHOOKS_PER_ORG) {
        return conflict(`${org.owner} on ${org.host} already has ${MAX_WEBHOOKS_PER_ORG} webhooks, the limit; delete one first.`);
      }
      const url = await checkedUrl(input.url);
      if (!url.ok) return url;
      const at = now();
      const id = `wh_${randomBytes(12).toString('hex')}`;
      const secret = generateSigningSecret();
      const subscription: WebhookSubscriptionRecord = {
        id,
        org: { host: org.host.toLowerCase(), owner: org.owner },
        repo: input.repo ? { host: input.repo.host.toLowerCase(), owner: input.repo.owner, name: input.repo.name } : null,
        url: url.value,
        eventTypes: canonicalTypes(input.eventTypes),
        description: input.description ?? null,
        secrets: [{ sealed: box.seal(secret, id), createdAt: at, expiresAt: null }],
        disabledReason: null,
        disabledAt: null,
        failingSince: null,
        consecutiveFailures: 0,
        createdAt: at,
        updatedAt: at,
      };
      await store.insertSubscription(subscription);
      return succeed({ webhook: webhookView(subscription, at), secret });
    },

    async list(org: Org): Promise<WebhookView[]> {
      const at = now();
      return (await store.listSubscriptions(org.host, org.owner)).map((s) => webhookView(s, at));
    },

    async update(
      org: Org,
      input: { id: string; url?: string; eventTypes?: WebhookEventType[] | null; description?: string | null; enabled?: boolean },
    ): Promise<Outcome<WebhookView>> {
      const found = await owned(org, input.id);
      if (!found.ok) return found;
      const at = now();
      const change: WebhookSubscriptionChange = { updatedAt: at };
      if (input.url !== undefined) {
        const url = await checkedUrl(input.url);
        if (!url.ok) return url;
        change.url = url.value;
      }
      if (input.eventTypes !== undefined) change.eventTypes = input.eventTypes === null ? null : canonicalTypes(input.eventTypes);
      if (input.description !== undefined) change.description = input.description;
      if (input.enabled === true) {
        // A fresh start: the failures that disabled it are forgiven.
        Object.assign(change, { disabledReason: null, disabledAt: null, failingSince: null, consecutiveFailures: 0 });
      } else if (input.enabled === false && found.value.disabledReason !== DISABLED_BY_OWNER) {
        // Disabled for failing, its events are held for it (endpoint-health.ts); its owner's disable ends that.
        Object.assign(change, { disabledReason: DISABLED_BY_OWNER, disabledAt: found.value.disabledAt ?? at });
      }
      const updated = await store.updateSubscription(found.value.id, change);
      if (!updated) return notFound(`No webhook ${input.id} exists for ${org.owner} on ${org.host}.`);
      if (input.enabled === true && found.value.disabledReason !== null) options.onDue?.();
      return succeed(webhookView(updated, at));
    },

    async delete(org: Org, input: { id: string }): Promise<Outcome<{ id: string }>> {
      const found = await owned(org, input.id);
      if (!found.ok) return found;
      await store.deleteSubscription(found.value.id);
      return succeed({ id: found.value.id });
    },

    async rotateSecret(
      org: Org,
      input: { id: string; graceMinutes?: number },
    ): Promise<Outcome<{ webhook: WebhookView; secret: string; previousSecretExpiresAt: string }>> {
      const found = await owned(org, input.id);
      if (!found.ok) return found;
      const at = now();
      const graceMs = (input.graceMinutes ?? DEFAULT_GRACE_MINUTES) * 60_000;
      const secret = generateSigningSecret();
      const secrets = rotateSecrets(found.value.secrets, { sealed: box.seal(secret, found.value.id), createdAt: at, expiresAt: null }, at, graceMs);
      const updated = await store.updateSubscription(found.value.id, { secrets, updatedAt: at });
      if (!updated) return notFound(`No webhook ${input.id} exists for ${org.owner} on ${org.host}.`);
      return succeed({ webhook: webhookView(updated, at), secret, previousSecretExpiresAt: new Date(at.getTime() + graceMs).toISOString() });
    },

    async listDeliveries(
      org: Org,
      input: { id: string; take?: number; cursor?: string },
    ): Promise<Outcome<{ deliveries: WebhookDeliveryView[]; nextCursor?: string }>> {
      const found = await owned(org, input.id);
      if (!found.ok) return found;
      const after = input.cursor === undefined ? undefined : decodeDeliveryCursor(input.cursor);
      if (after === null) return invalid('cursor is not one this service returned; start again without it.');
      const take = input.take ?? DEFAULT_DELIVERY_PAGE;
      // One extra row tells whether another page follows.
      const rows = await store.pageDeliveries(found.value.id, take + 1, after);
      const page = rows.slice(0, take);
      const last = page[page.length - 1];
      return succeed({
        deliveries: page.map(deliveryView),
        ...(rows.length > take && last ? { nextCursor: encodeDeliveryCursor(last.createdAt, last.id) } : {}),
      });
    },

    async redeliver(org: Org, input: { id: string; deliveryId: string }): Promise<Outcome<WebhookDeliveryView>> {
      const found = await owned(org, input.id);
      if (!found.ok) return found;
      const delivery = await store.findDelivery(input.deliveryId);
      if (!delivery || delivery.subscriptionId !== found.value.id) {
        return notFound(`No delivery ${input.deliveryId} exists for webhook ${input.id}.`);
      }
      if (found.value.disabledReason !== null) {
        return conflict(`Webhook ${input.id} is disabled (${found.value.disabledReason.replace(/\.$/, '')}); enable it with updateWebhook first.`);
      }
      const at = now();
      const claim = await store.latestClaim(delivery.id, delivery.attempts + 1);
      if (claim && claim.expiresAt > at) return conflict(`Delivery ${delivery.id} is being attempted right now; ask again when the attempt ends.`);
      const change: WebhookDeliveryChange =
        delivery.status === 'delivered' || delivery.status === 'dead'
          ? { status: 'pending', scheduleStart: delivery.attempts, nextAttemptAt: at }
          : { nextAttemptAt: at };
      const updated = await store.updateDelivery(delivery.id, change);
      if (!updated) return notFound(`No delivery ${input.deliveryId} exists for webhook ${input.id}.`);
      options.onDue?.();
      return succeed(deliveryView(updated));
    },
  };
}

export type WebhookService = ReturnType<typeof webhookService>;

/** Canonical order, no repeats; absent means every type. */
function canonicalTypes(types: WebhookEventType[] | undefined): WebhookEventType[] | null {
  if (types === undefined) return null;
  const wanted = new Set(types);
  return WEBHOOK_EVENT_TYPES.filter((t) => wanted.has(t));
}

/** The cursor is opaque to clients: where the previous page ended, newest first. */
function encodeDeliveryCursor(createdAt: Date, id: string): string {
  return Buffer.from(JSON.stringify({ t: createdAt.getTime(), id })).toString('base64url');
}

function decodeDeliveryCursor(cursor: string): { createdAt: Date; id: string } | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return null;
    const { t, id } = parsed as { t?: unknown; id?: unknown };
    if (typeof t !== 'number' || !Number.isFinite(t) || typeof id !== 'string' || !/^dlv_[0-9a-f]{1,64}$/.test(id)) return null;
    const createdAt = new Date(t);
    if (Number.isNaN(createdAt.getTime())) return null;
    return { createdAt, id };
  } catch {
    return null;
  }
}
