import { DEFAULT_RETRY_SCHEDULE_MS } from '../../src/webhooks/retry-schedule.js';
import { deliveryIdFor } from '../../src/webhooks/outbox.js';
import { deliveryCounts, openDeliveryDatabase, ORG, outgoingOn, subscribedReceiver, type DeliveryDatabase } from './rig.js';
import { fakeClock, prOf, queueEvent, seqOf, waitFor, type Receiver } from './support.js';

/** Delivery to a real receiver on 127.0.0.1 that verifies every signature with the standardwebhooks library. */

let db: DeliveryDatabase;
const receivers: Receiver[] = [];
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  db = await openDeliveryDatabase('webhook_delivery');
});
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  for (const r of receivers.splice(0)) await r.close();
  await db.cleanUp();
});
afterAll(async () => {
  await db.close();
});

function setUp(options: Parameters<typeof outgoingOn>[1] = {}) {
  const outgoing = outgoingOn(db, options);
  stops.push(() => outgoing.worker.stop({ graceMs: 100 }));
  return outgoing;
}

async function receiverFor(outgoing: ReturnType<typeof setUp>, input: Parameters<typeof subscribedReceiver>[2] = {}) {
  const sub = await subscribedReceiver(db, outgoing, input);
  receivers.push(sub.receiver);
  return sub;
}

/** For every PR: no event arrived before all earlier events of that PR were delivered. */
function expectOrderPerPr(receiver: Receiver): void {
  const delivered = new Set<string>();
  const byPr = new Map<number, number[]>();
  for (const r of receiver.received) {
    const pr = prOf(r.webhookId);
    for (const earlier of receiver.received) {
      if (prOf(earlier.webhookId) === pr && seqOf(earlier.webhookId) < seqOf(r.webhookId)) expect(delivered.has(earlier.webhookId)).toBe(true);
    }
    if (r.status < 300) {
      delivered.add(r.webhookId);
      byPr.set(pr, [...(byPr.get(pr) ?? []), seqOf(r.webhookId)]);
    }
  }
  for (const seqs of byPr.values()) expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
}

test('every delivery is signed per Standard Webhooks and verifies with the stock library; headers and body as specified', async () => {
  const outgoing = setUp();
  const { receiver, id } = await receiverFor(outgoing);
  const events = [queueEvent(1, 10, 'pull_request.submitted'), queueEvent(2, 10, 'pull_request.queued'), queueEvent(3, 11, 'pull_request.merged')];
  for (const e of events) await outgoing.outbox.publish(e);
  outgoing.worker.start();
  await waitFor(() => receiver.deliveredIds().length === 3, 10_000, 'three deliveries');
  await waitFor(async () => (await deliveryCounts(outgoing.metrics)).delivered === 3, 2_000, 'three recorded');

  expect(receiver.verificationFailures).toEqual([]);
  expect(receiver.received).toHaveLength(3);
  for (const r of receiver.received) {
    const event = events.find((e) => e.id === r.webhookId);
    expect(event).toBeDefined();
    expect(JSON.parse(r.body)).toEqual(event?.payload);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['user-agent']).toMatch(/^merge-queue-webhooks\//);
    expect(Math.abs(Number(r.timestamp) - Date.now() / 1000)).toBeLessThan(60);
    expect(r.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  }
  const page = await outgoing.service.listDeliveries(ORG, { id });
  expect(page.ok && page.value.deliveries.map((d) => [d.eventId, d.status, d.attempts, d.lastResponseCode, d.nextAttemptAt])).toEqual(
    expect.arrayContaining(events.map((e) => [e.id, 'delivered', 1, 200, null])),
  );
});

test('a replayed publish is a no-op: one outbox row and one delivery per (event, endpoint)', async () => {
  const outgoing = setUp();
  const { receiver, id } = await receiverFor(outgoing);
  const event = queueEvent(1, 20);
  await outgoing.outbox.publish(event);
  await outgoing.outbox.publish(event);
  await outgoing.worker.runOnce();
  await outgoing.outbox.publish({ ...event, payload: { ...event.payload, timestamp: new Date().toISOString() } });
  await outgoing.worker.runOnce();
  expect(receiver.received.map((r) => r.webhookId)).toEqual([event.id]);
  const page = await outgoing.service.listDeliveries(ORG, { id });
  expect(page.ok && page.value.deliveries.map((d) => d.id)).toEqual([deliveryIdFor(event.id, id)]);
});

test('the receiver fails for a while: deliveries retry with backoff and all arrive, in order per PR', async () => {
  const outgoing = setUp();
  const { receiver, id } = await receiverFor(outgoing);
  let failuresLeft = 12;
  receiver.respond = () => (failuresLeft-- > 0 ? 500 : 200);
  const events = [
    queueEvent(1, 1, 'pull_request.submitted'),
    queueEvent(2, 2, 'pull_request.submitted'),
    queueEvent(3, 1, 'pull_request.queued'),
    queueEvent(4, 2, 'pull_request.queued'),
    queueEvent(5, 1, 'pull_request.testing'),
    queueEvent(6, 3, 'pull_request.submitted'),
    queueEvent(7, 1, 'pull_request.merged'),
    queueEvent(8, 2, 'pull_request.failed'),
    queueEvent(9, 3, 'pull_request.canceled'),
  ];
  for (const e of events) await outgoing.outbox.publish(e);
  outgoing.worker.start();
  await waitFor(() => receiver.deliveredIds().length === events.length, 20_000, 'every event delivered');
  await waitFor(async () => (await deliveryCounts(outgoing.metrics)).delivered === events.length, 2_000, 'every delivery recorded');

  expect(receiver.verificationFailures).toEqual([]);
  expect(receiver.received.filter((r) => r.status === 500).length).toBe(12);
  expectOrderPerPr(receiver);
  // Retries carry the same webhook-id: a receiver drops repeats by it.
  expect(new Set(receiver.received.map((r) => r.webhookId))).toEqual(new Set(events.map((e) => e.id)));
  const page = await outgoing.service.listDeliveries(ORG, { id, take: 100 });
  if (!page.ok) throw new Error(page.failure.message);
  expect(page.value.deliveries.every((d) => d.status === 'delivered')).toBe(true);
  expect(page.value.deliveries.some((d) => d.attempts > 1)).toBe(true);
  const counts = await deliveryCounts(outgoing.metrics);
  expect(counts).toMatchObject({ delivered: events.length, failed: 12 });
});

test('backoff: the schedule with jitter from the injected random source, over more than a day, then dead', async () => {
  const clock = fakeClock();
  const randoms = [0, 0.25, 0.5, 0.75, 0.999, 0.5, 0.5, 0.5, 0.5];
  let r = 0;
  const outgoing = setUp({ now: () => new Date(clock.now()), worker: { random: () => randoms[r++ % randoms.length] ?? 0.5, retrySchedule: DEFAULT_RETRY_SCHEDULE_MS, disableAfterMs: 1e12 } });
  const { receiver, id } = await receiverFor(outgoing);
  receiver.clock = clock.now;
  receiver.respond = () => 503;
  const event = queueEvent(1, 30);
  await outgoing.outbox.publish({ ...event });
  const waits: number[] = [];
  const start = clock.now();
  for (let attempt = 1; attempt <= 10; attempt++) {
    expect(await outgoing.worker.runOnce()).toBe(1);
    // Not due yet: nothing happens.
    expect(await outgoing.worker.runOnce()).toBe(0);
    const delivery = await db.stores.webhooks.findDelivery(deliveryIdFor(event.id, id));
    if (!delivery) throw new Error('no delivery');
    expect(delivery.attempts).toBe(attempt);
    if (attempt === 10) {
      expect(delivery).toMatchObject({ status: 'dead', nextAttemptAt: null, lastResponseCode: 503, lastError: 'HTTP 503.' });
      break;
    }
    expect(delivery.status).toBe('failed');
    const wait = (delivery.nextAttemptAt?.getTime() ?? 0) - clock.now();
    waits.push(wait);
    clock.advance(wait);
  }
  const expected = DEFAULT_RETRY_SCHEDULE_MS.map((base, i) => Math.round(base * (0.8 + 0.4 * (randoms[i] ?? 0.5))));
  expect(waits).toEqual(expected);
  expect(clock.now() - start).toBeGreaterThan(24 * 3_600_000);
  expect(receiver.received).toHaveLength(10);
  expect(new Set(receiver.received.map((x) => x.webhookId))).toEqual(new Set([event.id]));
  expect(receiver.verificationFailures).toEqual([]);
  expect(await outgoing.worker.runOnce()).toBe(0);
});

test('redirects are not followed: a 3xx is a failed attempt', async () => {
  const outgoing = setUp();
  const { receiver, id } = await receiverFor(outgoing);
  receiver.respond = (d) => (d.path === '/hooks' ? 302 : 200);
  await outgoing.outbox.publish(queueEvent(1, 40));
  await outgoing.worker.runOnce();
  expect(receiver.received.map((r) => r.path)).toEqual(['/hooks']);
  const delivery = await db.stores.webhooks.findDelivery(deliveryIdFor(queueEvent(1, 40).id, id));
  expect(delivery).toMatchObject({ status: 'failed', lastResponseCode: 302, lastError: expect.stringMatching(/redirects are not followed/) });
});

test('every call has a timeout: a receiver that does not answer in time is a timed-out attempt, retried later', async () => {
  const outgoing = setUp({ timeoutMs: 200 });
  const { receiver, id } = await receiverFor(outgoing);
  receiver.respond = () => new Promise((resolve) => setTimeout(() => resolve(200), 1_000));
  await outgoing.outbox.publish(queueEvent(1, 50));
  await outgoing.worker.runOnce();
  const delivery = await db.stores.webhooks.findDelivery(deliveryIdFor(queueEvent(1, 50).id, id));
  expect(delivery).toMatchObject({ status: 'failed', lastResponseCode: null, lastError: 'No answer within 200 ms.' });
  expect(await deliveryCounts(outgoing.metrics)).toMatchObject({ timeout: 1 });
});

test('DNS rebinding: a host that resolved publicly at registration but now resolves to loopback is refused at delivery', async () => {
  let answer = ['93.184.216.34'];
  const lookup = async () => answer;
  const outgoing = setUp({ allowPrivate: false, lookup });
  const created = await outgoing.service.create(ORG, { url: 'https://hooks.example.test/in' });
  if (!created.ok) throw new Error(created.failure.message);
  db.created.push(created.value.webhook.id);
  answer = ['127.0.0.1'];
  await outgoing.outbox.publish(queueEvent(1, 60));
  expect(await outgoing.worker.runOnce()).toBe(1);
  const delivery = await db.stores.webhooks.findDelivery(deliveryIdFor(queueEvent(1, 60).id, created.value.webhook.id));
  expect(delivery).toMatchObject({ status: 'failed', lastResponseCode: null, lastError: expect.stringMatching(/resolves to a loopback address/) });
  expect(await deliveryCounts(outgoing.metrics)).toMatchObject({ refused: 1 });
});

test('subscriptions filter by event type and repository; other organizations never get an event', async () => {
  const outgoing = setUp();
  const merged = await receiverFor(outgoing, { eventTypes: ['pull_request.merged'] });
  const widgetsOnly = await receiverFor(outgoing, { repo: { host: 'github.com', owner: 'acme', name: 'widgets' } });
  const otherOrg = await receiverFor(outgoing, { org: { host: 'github.com', owner: 'globex' } });
  await outgoing.outbox.publish(queueEvent(1, 70, 'pull_request.queued'));
  await outgoing.outbox.publish(queueEvent(2, 70, 'pull_request.merged'));
  await outgoing.outbox.publish(queueEvent(3, 71, 'pull_request.merged', { name: 'gadgets' }));
  outgoing.worker.start();
  await waitFor(() => merged.receiver.deliveredIds().length === 2 && widgetsOnly.receiver.deliveredIds().length === 2, 10_000, 'deliveries');
  await outgoing.worker.stop();
  expect(merged.receiver.deliveredIds().sort()).toEqual(['evt_q1_2_70', 'evt_q1_3_71']);
  expect(widgetsOnly.receiver.deliveredIds()).toEqual(['evt_q1_1_70', 'evt_q1_2_70']);
  expect(otherOrg.receiver.received).toEqual([]);
});

test('redeliverWebhook sends a delivered event again, with the same webhook-id', async () => {
  const outgoing = setUp();
  const { receiver, id } = await receiverFor(outgoing);
  const event = queueEvent(1, 80);
  await outgoing.outbox.publish(event);
  await outgoing.worker.runOnce();
  const redelivered = await outgoing.service.redeliver(ORG, { id, deliveryId: deliveryIdFor(event.id, id) });
  expect(redelivered.ok && redelivered.value).toMatchObject({ status: 'pending', attempts: 1 });
  await outgoing.worker.runOnce();
  expect(receiver.received.map((r) => [r.webhookId, r.status])).toEqual([
    [event.id, 200],
    [event.id, 200],
  ]);
  expect(receiver.verificationFailures).toEqual([]);
  const delivery = await db.stores.webhooks.findDelivery(deliveryIdFor(event.id, id));
  expect(delivery).toMatchObject({ status: 'delivered', attempts: 2 });
});

test('logs carry the delivery id and event id, never the secret or the body', async () => {
  const outgoing = setUp();
  const { receiver, secret } = await receiverFor(outgoing);
  let first = true;
  receiver.respond = () => (first ? ((first = false), 500) : 200);
  const event = queueEvent(1, 90);
  await outgoing.outbox.publish(event);
  outgoing.worker.start();
  await waitFor(() => receiver.deliveredIds().length === 1, 10_000, 'delivery');
  await outgoing.worker.stop();
  const lines = outgoing.logs.lines;
  expect(lines.some((l) => /webhook delivery failed; will retry/.test(l) && l.includes(event.id) && l.includes('"deliveryId":"dlv_'))).toBe(true);
  expect(lines.some((l) => /webhook delivered/.test(l) && l.includes(event.id))).toBe(true);
  for (const line of lines) {
    expect(line).not.toContain(secret);
    expect(line).not.toContain(secret.slice('whsec_'.length, 30));
    expect(line).not.toContain('"author"');
  }
});

test('an endpoint nobody listens on: a failed attempt whose error names the cause', async () => {
  const outgoing = setUp();
  const { receiver, id } = await receiverFor(outgoing);
  await receiver.close();
  await outgoing.outbox.publish(queueEvent(1, 95));
  await outgoing.worker.runOnce();
  const delivery = await db.stores.webhooks.findDelivery(deliveryIdFor(queueEvent(1, 95).id, id));
  expect(delivery).toMatchObject({ status: 'failed', attempts: 1, lastResponseCode: null, lastError: expect.stringMatching(/^The request failed: .*ECONNREFUSED/) });
  expect(await deliveryCounts(outgoing.metrics)).toMatchObject({ failed: 1 });
});

test("a delivered event's successor in its chain goes next in the same round: a PR's backlog of events is one round, not one a round (found by review)", async () => {
  const outgoing = setUp();
  const { receiver } = await receiverFor(outgoing);
  const backlog = [1, 2, 3, 4, 5, 6].map((seq) => queueEvent(seq, 40));
  await outgoing.outbox.publish(...backlog);
  expect(await outgoing.worker.runOnce()).toBe(6);
  expect(receiver.deliveredIds()).toEqual(backlog.map((e) => e.id));
});

test('a chain goes on within a round only for a time-out\'s length: a slow endpoint\'s backlog does not hold the round (found by review)', async () => {
  const outgoing = setUp({ timeoutMs: 300 });
  const { receiver } = await receiverFor(outgoing);
  receiver.respond = async () => {
    await new Promise((resolve) => setTimeout(resolve, 120));
    return 200;
  };
  const backlog = [1, 2, 3, 4, 5, 6].map((seq) => queueEvent(seq, 41));
  await outgoing.outbox.publish(...backlog);
  const first = await outgoing.worker.runOnce();
  // About 300 ms of 120 ms answers: three or so, not all six.
  expect(first).toBeGreaterThanOrEqual(2);
  expect(first).toBeLessThan(6);
  let rounds = 1;
  while (receiver.deliveredIds().length < 6 && rounds < 10) {
    await outgoing.worker.runOnce();
    rounds++;
  }
  expect(receiver.deliveredIds()).toEqual(backlog.map((e) => e.id));
});
