/**
 * A decision's events are published together, and one endpoint's events of one PR are written in order: a worker on
 * any replica takes a chain's lowest sequence it sees as its head, so a later event must never be visible before an
 * earlier one. (Found by review: written all at once, `testing` could be delivered before `submitted`.)
 */
import type { WebhookDeliveryRecord, WebhookStore, WebhookSubscriptionRecord } from '../../src/ports/webhook-store.js';
import { StoredWebhookOutbox } from '../../src/webhooks/outbox.js';
import { queueEvent } from './support.js';

const at = new Date('2026-11-29T12:00:00Z');
const subscription = (id: string): WebhookSubscriptionRecord => ({ id, org: { host: 'github.com', owner: 'acme' }, repo: null, url: 'https://example.com/hook', eventTypes: null, description: null, secrets: [], disabledReason: null, disabledAt: null, failingSince: null, consecutiveFailures: 0, createdAt: at, updatedAt: at });

test("one chain's rows are written one after another in sequence; chains side by side", async () => {
  const visible: WebhookDeliveryRecord[] = [];
  const seenAtInsert: Array<{ row: string; visibleInChain: number[] }> = [];
  const store = {
    listSubscriptions: async () => [subscription('s1'), subscription('s2')],
    async insertDelivery(row: WebhookDeliveryRecord) {
      seenAtInsert.push({ row: `${row.subscriptionId}:${row.sequence}`, visibleInChain: visible.filter((v) => v.subscriptionId === row.subscriptionId && v.orderingKey === row.orderingKey).map((v) => v.sequence) });
      // The earliest events take longest to be written: all at once, the later ones would be seen first.
      await new Promise((resolve) => setTimeout(resolve, 40 - row.sequence * 10));
      visible.push(row);
      return { ok: true as const, value: row };
    },
  } as unknown as WebhookStore;
  let told = 0;
  const outbox = new StoredWebhookOutbox({ store, now: () => at, onPublished: () => told++ });
  await outbox.publish(queueEvent(1, 7, 'pull_request.submitted'), queueEvent(2, 7, 'pull_request.queued'), queueEvent(3, 7, 'pull_request.testing'));
  for (const sub of ['s1', 's2']) {
    // Each row of the chain went in once every earlier one was written.
    expect(seenAtInsert.filter((s) => s.row.startsWith(`${sub}:`))).toEqual([
      { row: `${sub}:1`, visibleInChain: [] },
      { row: `${sub}:2`, visibleInChain: [1] },
      { row: `${sub}:3`, visibleInChain: [1, 2] },
    ]);
  }
  // The two endpoints' chains side by side: s2's first row went in before s1's chain was done.
  expect(seenAtInsert.findIndex((s) => s.row === 's2:1')).toBeLessThan(seenAtInsert.findIndex((s) => s.row === 's1:3'));
  expect(told).toBe(1);
});
