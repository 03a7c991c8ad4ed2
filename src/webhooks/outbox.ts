import { createHash } from 'node:crypto';
import { repoKey, type RepoRef } from '../domain/repo.js';
import type { OutgoingEvent, WebhookOutbox } from '../ports/webhook-outbox.js';
import type { WebhookStore, WebhookSubscriptionRecord } from '../ports/webhook-store.js';

/** The outbox row id of an (event, subscription): the same on every replay. */
export function deliveryIdFor(eventId: string, subscriptionId: string): string {
  return `dlv_${createHash('sha256').update(`${eventId}\n${subscriptionId}`).digest('hex').slice(0, 32)}`;
}

function matches(subscription: WebhookSubscriptionRecord, event: OutgoingEvent): boolean {
  if (subscription.eventTypes !== null && !subscription.eventTypes.includes(event.payload.type)) return false;
  return subscription.repo === null || repoKey(subscription.repo) === repoKey(event.payload.repository);
}

/**
 * The WebhookOutbox on MongoDB: `publish` writes one outbox row per matching
 * enabled subscription of the event's organization, under the unique key
 * (event id, subscription id), so a replayed publish adds nothing. Delivery is
 * the WebhookDeliveryWorker's job.
 */
export class StoredWebhookOutbox implements WebhookOutbox {
  constructor(
    private readonly options: {
      store: WebhookStore;
      now?: () => Date;
      /** Told after rows were written (the worker's nudge), so delivery need not wait for a poll. */
      onPublished?: () => void;
    },
  ) {}

  async hasSubscribers(repo: RepoRef): Promise<boolean> {
    const subscriptions = await this.options.store.listEnabledSubscriptions({ host: repo.host, owner: repo.owner });
    return subscriptions.some((s) => s.repo === null || repoKey(s.repo) === repoKey(repo));
  }

  async publish(event: OutgoingEvent): Promise<void> {
    const { host, owner } = event.payload.repository;
    const subscriptions = (await this.options.store.listEnabledSubscriptions({ host, owner })).filter((s) => matches(s, event));
    if (subscriptions.length === 0) return;
    const at = (this.options.now ?? (() => new Date()))();
    const body = JSON.stringify(event.payload);
    let added = 0;
    for (const subscription of subscriptions) {
      const inserted = await this.options.store.insertDelivery({
        id: deliveryIdFor(event.id, subscription.id),
        eventId: event.id,
        subscriptionId: subscription.id,
        eventType: event.payload.type,
        orderingKey: event.orderingKey,
        sequence: event.sequence,
        body,
        status: 'pending',
        attempts: 0,
        scheduleStart: 0,
        nextAttemptAt: at,
        lastAttemptAt: null,
        lastResponseCode: null,
        lastError: null,
        createdAt: at,
        deliveredAt: null,
      });
      if (inserted.ok) added += 1;
    }
    if (added > 0) this.options.onPublished?.();
  }
}
