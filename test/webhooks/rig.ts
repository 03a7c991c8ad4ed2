import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { ServiceMetrics } from '../../src/observability/service-metrics.js';
import type { Stores } from '../../src/ports/stores.js';
import type { WebhookEventType } from '../../src/ports/webhook-outbox.js';
import { composeOutgoingWebhooks, type OutgoingWebhooks, type OutgoingWebhooksOptions } from '../../src/webhooks/compose-webhooks.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';
import { memoryLog, startReceiver, testKey, type Receiver } from './support.js';

export const ORG = { host: 'github.com', owner: 'acme' };

/** A test file's database, and the subscriptions its tests made (deleted after each test, so workers never see another test's). */
export interface DeliveryDatabase {
  stores: Stores;
  key: Buffer;
  created: string[];
  cleanUp(): Promise<void>;
  close(): Promise<void>;
}

export async function openDeliveryDatabase(prefix: string): Promise<DeliveryDatabase> {
  const database: TestDatabaseUri = await createTestDatabaseUri(prefix);
  const stores = await openMongoStores({ uri: database.uri });
  const created: string[] = [];
  return {
    stores,
    key: testKey(),
    created,
    async cleanUp() {
      for (const id of created.splice(0)) await stores.webhooks.deleteSubscription(id);
    },
    async close() {
      await stores.close();
      await dropTestDatabase(database);
      await stopTestServer();
    },
  };
}

/** Outgoing webhooks on the test database with in-memory logs and metrics; workers poll fast and retry after milliseconds. */
export function outgoingOn(db: DeliveryDatabase, options: Partial<OutgoingWebhooksOptions> = {}) {
  const logs = memoryLog();
  const metrics = new ServiceMetrics({ processMetrics: false });
  const outgoing: OutgoingWebhooks = composeOutgoingWebhooks({
    store: db.stores.webhooks,
    key: db.key,
    allowPrivate: true,
    log: logs.log,
    metrics,
    pollMs: 20,
    timeoutMs: 2_000,
    ...options,
    worker: { retrySchedule: [30, 60, 90, 120, 150, 200, 250, 300], random: () => 0.5, ...options.worker },
  });
  return { ...outgoing, logs, metrics };
}

/** A receiver and a subscription pointing at it; the receiver verifies with the subscription's secret. */
export async function subscribedReceiver(
  db: DeliveryDatabase,
  outgoing: OutgoingWebhooks,
  input: { eventTypes?: WebhookEventType[]; repo?: { host: string; owner: string; name: string }; org?: { host: string; owner: string } } = {},
): Promise<{ receiver: Receiver; secret: string; id: string }> {
  const receiver = await startReceiver();
  const created = await outgoing.service.create(input.org ?? ORG, { url: receiver.url, ...input });
  if (!created.ok) throw new Error(created.failure.message);
  db.created.push(created.value.webhook.id);
  receiver.secrets.push(created.value.secret);
  return { receiver, secret: created.value.secret, id: created.value.webhook.id };
}

/** mq_webhook_deliveries_total by result. */
export async function deliveryCounts(metrics: ServiceMetrics): Promise<Record<string, number>> {
  const values = (await metrics.webhookDeliveries.get()).values;
  return Object.fromEntries(values.map((v) => [String(v.labels.result), v.value]));
}
