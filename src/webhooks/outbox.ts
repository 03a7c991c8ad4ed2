import { createHash } from 'node:crypto';
import { orgKey, repoKey, type RepoRef } from '../domain/repo.js';
import type { OutgoingEvent, WebhookOutbox } from '../ports/webhook-outbox.js';
import type { WebhookDeliveryRecord, WebhookStore, WebhookSubscriptionRecord } from '../ports/webhook-store.js';
import { receivesEvents } from './endpoint-health.js';

/** The outbox row id of an (event, subscription): the same on every replay. */
export function deliveryIdFor(eventId: string, subscriptionId: string): string {
  return `dlv_${createHash('sha256').update(`${eventId}\n${subscriptionId}`).digest('hex').slice(0, 32)}`;
}

function matches(subscription: WebhookSubscriptionRecord, event: OutgoingEvent): boolean {
  if (subscription.eventTypes !== null && !subscription.eventTypes.includes(event.payload.type)) return false;
  return subscription.repo === null || repoKey(subscription.repo) === repoKey(event.payload.repository);
}

/** Chains of outbox rows written at once (a decision's events for every endpoint: a batch of 10 PRs to 50 endpoints is 1,000 rows). */
const INSERTS_AT_ONCE = 50;

/**
 * The WebhookOutbox on MongoDB: `publish` writes one outbox row per matching
 * subscription of the events' organization that receives events (enabled, or held
 * for while disabled for failing: endpoint-health.ts), under the unique key
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

  private now(): Date {
    return (this.options.now ?? (() => new Date()))();
  }

  private async receiving(org: { host: string; owner: string }): Promise<WebhookSubscriptionRecord[]> {
    return (await this.options.store.listSubscriptions(org.host, org.owner)).filter((s) => receivesEvents(s));
  }

  async hasSubscribers(repo: RepoRef): Promise<boolean> {
    const subscriptions = await this.receiving(repo);
    return subscriptions.some((s) => s.repo === null || repoKey(s.repo) === repoKey(repo));
  }

  /** One listing of the subscriptions per organization and call (a decision's events come in one call), not per event. */
  async publish(...events: OutgoingEvent[]): Promise<void> {
    const at = this.now();
    const listed = new Map<string, Promise<WebhookSubscriptionRecord[]>>();
    const rows: WebhookDeliveryRecord[] = [];
    for (const event of events) {
      const { host, owner } = event.payload.repository;
      const org = orgKey(host, owner);
      if (!listed.has(org)) listed.set(org, this.receiving({ host, owner }));
      const subscriptions = ((await listed.get(org)) ?? []).filter((s) => matches(s, event));
      const body = JSON.stringify(event.payload);
      for (const subscription of subscriptions) {
        rows.push({
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
      }
    }
    // One chain (an endpoint's events of one PR) is written in order, chains side by side: a worker on any replica
    // takes a chain's lowest sequence it sees as its head, so a later event must never be seen before an earlier one
    // (found by review: written all at once, `testing` could go out before `submitted`).
    const chains = new Map<string, WebhookDeliveryRecord[]>();
    for (const row of rows) {
      const key = `${row.subscriptionId}\n${row.orderingKey}`;
      const chain = chains.get(key);
      if (chain) chain.push(row);
      else chains.set(key, [row]);
    }
    let added = 0;
    const lists = [...chains.values()];
    for (let i = 0; i < lists.length; i += INSERTS_AT_ONCE) {
      await Promise.all(
        lists.slice(i, i + INSERTS_AT_ONCE).map(async (chain) => {
          for (const row of chain.sort((a, b) => a.sequence - b.sequence)) if ((await this.options.store.insertDelivery(row)).ok) added++;
        }),
      );
    }
    if (added > 0) this.options.onPublished?.();
  }
}
