/**
 * The service's own trouble is not the endpoint's failure (found by review): a resolver failing just now, or a
 * signing secret this replica's key cannot open (a replica with a key file of its own, a changed
 * MQ_WEBHOOK_SECRET_KEY), leaves the delivery to be tried again as the same attempt, counts no failure against
 * the endpoint (which would disable it after a day), and is delivered once the trouble ends.
 */
import type { AddressLookup } from '../../src/webhooks/url-safety.js';
import { deliveryIdFor } from '../../src/webhooks/outbox.js';
import { openDeliveryDatabase, ORG, outgoingOn, type DeliveryDatabase } from './rig.js';
import { fakeClock, queueEvent, startReceiver, testKey, type Receiver } from './support.js';

let db: DeliveryDatabase;
const receivers: Receiver[] = [];
beforeAll(async () => {
  db = await openDeliveryDatabase('webhook_deferred');
});
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
  await db.cleanUp();
});
afterAll(() => db.close());

/** An endpoint registered through `outgoing`'s service (cleaned up after the test); its id. */
async function endpoint(outgoing: ReturnType<typeof outgoingOn>, url: string): Promise<string> {
  const created = await outgoing.service.create(ORG, { url });
  if (!created.ok) throw new Error(created.failure.message);
  db.created.push(created.value.webhook.id);
  return created.value.webhook.id;
}

test('a resolver failing at an attempt defers it: no attempt spent, no failure counted; an address the URL may not use is the endpoint\'s failure', async () => {
  const clock = fakeClock();
  const dns = { down: false, address: '8.8.8.8' }; // public (never connected to here)
  const lookup: AddressLookup = async () => {
    if (dns.down) throw Object.assign(new Error('temporary failure in name resolution'), { code: 'EAI_AGAIN' });
    return [dns.address];
  };
  // Private addresses refused, as in production: only then is the name looked up at each attempt.
  const outgoing = outgoingOn(db, { lookup, allowPrivate: false, now: () => new Date(clock.now()) });
  const id = await endpoint(outgoing, 'https://receiver.example/hook');
  const event = queueEvent(1, 1);
  await outgoing.outbox.publish(event);

  dns.down = true;
  await outgoing.worker.runOnce();
  const deferred = await db.stores.webhooks.findDelivery(deliveryIdFor(event.id, id));
  expect(deferred).toMatchObject({ status: 'pending', attempts: 0, lastError: expect.stringMatching(/could not be looked up just now/) });
  expect(deferred?.nextAttemptAt?.getTime()).toBe(clock.now() + 60_000);
  expect(await db.stores.webhooks.findSubscription(id)).toMatchObject({ failingSince: null, consecutiveFailures: 0 });
  expect(await outgoing.worker.runOnce()).toBe(0); // not due again before its minute

  // The name now resolves to a loopback address: the URL's own fault, an attempt spent and a failure counted.
  dns.down = false;
  dns.address = '127.0.0.1';
  clock.advance(60_000);
  await outgoing.worker.runOnce();
  expect(await db.stores.webhooks.findDelivery(deliveryIdFor(event.id, id))).toMatchObject({ status: 'failed', attempts: 1, lastError: expect.stringMatching(/loopback/) });
  expect(await db.stores.webhooks.findSubscription(id)).toMatchObject({ consecutiveFailures: 1 });
});

test('a replica whose key cannot open the signing secret defers the delivery and says why; one with the right key delivers it', async () => {
  const clock = fakeClock();
  const right = outgoingOn(db, { now: () => new Date(clock.now()) });
  const wrong = outgoingOn(db, { key: testKey(), now: () => new Date(clock.now()) });
  const receiver = await startReceiver();
  receivers.push(receiver);
  const created = await right.service.create(ORG, { url: receiver.url });
  if (!created.ok) throw new Error(created.failure.message);
  db.created.push(created.value.webhook.id);
  receiver.secrets.push(created.value.secret);
  const id = created.value.webhook.id;
  const event = queueEvent(2, 2);
  await right.outbox.publish(event);

  await wrong.worker.runOnce();
  expect(await db.stores.webhooks.findDelivery(deliveryIdFor(event.id, id))).toMatchObject({ status: 'pending', attempts: 0, lastError: expect.stringMatching(/cannot be decrypted/) });
  expect(await db.stores.webhooks.findSubscription(id)).toMatchObject({ failingSince: null, consecutiveFailures: 0 });
  expect(wrong.logs.lines.some((l) => /cannot be decrypted with this key: the delivery waits/.test(l))).toBe(true);
  expect(receiver.received).toHaveLength(0);

  clock.advance(60_000);
  await right.worker.runOnce();
  expect(receiver.deliveredIds()).toEqual([event.id]);
  expect(receiver.verificationFailures).toEqual([]);
});

test('deferred for over a day, the trouble counts as the endpoint\'s: the attempt is spent and the failure counted (found by review: deferred for ever)', async () => {
  const clock = fakeClock();
  const lookup: AddressLookup = async () => {
    throw Object.assign(new Error('server failure'), { code: 'ESERVFAIL' });
  };
  const outgoing = outgoingOn(db, { lookup, allowPrivate: false, now: () => new Date(clock.now()) });
  // Registered while its name resolved (registration itself needs it); then its own servers fail.
  const id = await endpoint(outgoingOn(db, { lookup: async () => ['8.8.8.8'], allowPrivate: false }), 'https://lame.example/hook');
  const event = queueEvent(3, 3);
  await outgoing.outbox.publish(event);
  await outgoing.worker.runOnce();
  expect(await db.stores.webhooks.findDelivery(deliveryIdFor(event.id, id))).toMatchObject({ status: 'pending', attempts: 0 });
  // Two hours on: deferred again, by a tenth of its age (12 minutes).
  clock.advance(2 * 60 * 60_000);
  await outgoing.worker.runOnce();
  const later = await db.stores.webhooks.findDelivery(deliveryIdFor(event.id, id));
  expect(later).toMatchObject({ status: 'pending', attempts: 0 });
  expect(later?.nextAttemptAt?.getTime()).toBe(clock.now() + 12 * 60_000);
  clock.advance(23 * 60 * 60_000);
  await outgoing.worker.runOnce();
  expect(await db.stores.webhooks.findDelivery(deliveryIdFor(event.id, id))).toMatchObject({ status: 'failed', attempts: 1 });
  expect(await db.stores.webhooks.findSubscription(id)).toMatchObject({ consecutiveFailures: 1 });
});
