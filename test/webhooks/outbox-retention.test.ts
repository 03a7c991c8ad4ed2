/**
 * The outbox keeps each event's whole body: delivered and dead deliveries are
 * forgotten after a while (OUTBOX_MEMORY_MS), open ones only when held that long
 * for a disabled endpoint; deleting a
 * long-lived endpoint deletes its deliveries in bounded batches. (Found by
 * review: nothing pruned the outbox, and deleteWebhook named every delivery id
 * in one filter.)
 */
import type { WebhookDeliveryRecord, WebhookDeliveryStatus } from '../../src/ports/webhook-store.js';
import { forgetFinishedDeliveries } from '../../src/webhooks/outbox-retention.js';
import { openDeliveryDatabase, ORG, type DeliveryDatabase } from './rig.js';

let db: DeliveryDatabase;
beforeAll(async () => {
  db = await openDeliveryDatabase('outbox_retention');
});
afterAll(() => db.close());

const DAY = 24 * 60 * 60 * 1000;
const now = Date.parse('2026-11-26T12:00:00Z');

async function subscription(id: string, disabledReason: string | null = null) {
  const at = new Date(now);
  await db.stores.webhooks.insertSubscription({ id, org: ORG, repo: null, url: 'https://example.com/hook', eventTypes: null, description: null, secrets: [], disabledReason, disabledAt: disabledReason ? at : null, failingSince: null, consecutiveFailures: 0, createdAt: at, updatedAt: at });
}

function delivery(id: string, subscriptionId: string, status: WebhookDeliveryStatus, lastAttemptDaysAgo: number | null): WebhookDeliveryRecord {
  const lastAttemptAt = lastAttemptDaysAgo === null ? null : new Date(now - lastAttemptDaysAgo * DAY);
  return { id, eventId: `event-${id}`, subscriptionId, eventType: 'pull_request.merged', orderingKey: 'pr:1', sequence: Number(id.replace(/\D/g, '')) || 0, body: '{}', status, attempts: lastAttemptAt ? 1 : 0, scheduleStart: 0, nextAttemptAt: status === 'failed' ? new Date(now) : null, lastAttemptAt, lastResponseCode: null, lastError: null, createdAt: new Date(now - 30 * DAY), deliveredAt: status === 'delivered' ? lastAttemptAt : null };
}

test('delivered and dead deliveries older than the cut are forgotten with their claims, in batches; open and recent ones stay', async () => {
  await subscription('sub-prune');
  const rows: Array<[string, WebhookDeliveryStatus, number | null]> = [
    ['d1', 'delivered', 20],
    ['d2', 'dead', 15],
    ['d3', 'delivered', 20],
    ['d4', 'delivered', 2], // recent
    ['d5', 'failed', 20], // still retried
    ['d6', 'pending', null], // never attempted
  ];
  for (const [id, status, daysAgo] of rows) await db.stores.webhooks.insertDelivery(delivery(id, 'sub-prune', status, daysAgo));
  await db.stores.webhooks.claimAttempt('d1', 1, 'worker', new Date(now - 20 * DAY), 1_000);
  const cut = new Date(now - 14 * DAY);
  // A batch of 2, then the rest.
  expect(await db.stores.webhooks.pruneFinished(cut, 2)).toBe(2);
  expect(await db.stores.webhooks.pruneFinished(cut, 2)).toBe(1);
  expect(await db.stores.webhooks.pruneFinished(cut, 2)).toBe(0);
  const left = await db.stores.webhooks.pageDeliveries('sub-prune', 100);
  expect(left.map((d) => d.id).sort()).toEqual(['d4', 'd5', 'd6']);
  expect(await db.stores.webhooks.latestClaim('d1', 1)).toBeNull();
  await db.stores.webhooks.deleteSubscription('sub-prune');
});

test('open deliveries held for a disabled endpoint are forgotten once older than the cut; an enabled endpoint\'s never', async () => {
  await subscription('sub-held', 'Disabled automatically at …');
  await subscription('sub-live');
  const held = (id: string, subscriptionId: string, recordedDaysAgo: number) => ({ ...delivery(id, subscriptionId, 'pending', null), createdAt: new Date(now - recordedDaysAgo * DAY) });
  await db.stores.webhooks.insertDelivery(held('h1', 'sub-held', 20));
  await db.stores.webhooks.insertDelivery(held('h2', 'sub-held', 3));
  await db.stores.webhooks.insertDelivery(held('l1', 'sub-live', 20));
  expect(await forgetFinishedDeliveries(db.stores.webhooks, new Date(now - 14 * DAY))).toBe(1);
  expect((await db.stores.webhooks.pageDeliveries('sub-held', 10)).map((d) => d.id)).toEqual(['h2']);
  expect((await db.stores.webhooks.pageDeliveries('sub-live', 10)).map((d) => d.id)).toEqual(['l1']);
  await db.stores.webhooks.deleteSubscription('sub-held');
  await db.stores.webhooks.deleteSubscription('sub-live');
});

test('the maintenance task forgets a backlog bigger than one batch in one round', async () => {
  await subscription('sub-backlog');
  for (let i = 0; i < 2_100; i++) await db.stores.webhooks.insertDelivery(delivery(`b${i}`, 'sub-backlog', i % 2 === 0 ? 'delivered' : 'dead', 20));
  await db.stores.webhooks.insertDelivery(delivery('b-open', 'sub-backlog', 'failed', 20));
  expect(await forgetFinishedDeliveries(db.stores.webhooks, new Date(now - 14 * DAY))).toBe(2_100);
  expect((await db.stores.webhooks.pageDeliveries('sub-backlog', 10)).map((d) => d.id)).toEqual(['b-open']);
  await db.stores.webhooks.deleteSubscription('sub-backlog');
}, 120_000);

test('deleting an endpoint with more deliveries than one batch deletes them all, and their claims', async () => {
  await subscription('sub-many');
  for (let i = 0; i < 2_100; i++) await db.stores.webhooks.insertDelivery(delivery(`m${i}`, 'sub-many', 'delivered', 1));
  await db.stores.webhooks.claimAttempt('m2099', 1, 'worker', new Date(now), 1_000);
  await db.stores.webhooks.deleteSubscription('sub-many');
  expect(await db.stores.webhooks.pageDeliveries('sub-many', 10)).toEqual([]);
  expect(await db.stores.webhooks.latestClaim('m2099', 1)).toBeNull();
  expect(await db.stores.webhooks.findSubscription('sub-many')).toBeNull();
}, 120_000);
