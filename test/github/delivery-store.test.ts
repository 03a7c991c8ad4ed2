/**
 * GitHub deliveries on the real store: recorded with their first attempt
 * counted (the receiving replica handles them at once), in groups when they
 * arrive together, a redelivery told apart even inside a group; each attempt
 * claimed once; a retry counted and claimed; what is unhandled found by the sweep.
 */
import { bodyOf, MAX_RECORDED_BODY_BYTES, recordedBody } from '../../src/github/recorded-body.js';
import { useRunnerDatabase } from '../runner/support/runner-fixture.js';

const db = useRunnerDatabase('github_deliveries');

const received = (id: string, at: Date) => ({ id, name: 'pull_request', payloadJson: `{"id":"${id}"}`, receivedAt: at });

test('deliveries recorded together each get their own answer: a redelivery in the same group is refused, the others recorded', async () => {
  const at = new Date('2026-11-01T10:00:00Z');
  expect(await db.stores.deliveries.record(received('d-0', at))).toBe(true);
  const later = new Date('2026-11-01T10:00:05Z');
  const ids = ['d-1', 'd-2', 'd-0', 'd-3', 'd-4'];
  const answers = await Promise.all(ids.map((id) => db.stores.deliveries.record(received(id, later))));
  expect(answers).toEqual([true, true, false, true, true]);
  // Recorded with their first attempt counted; none handled yet.
  const unhandled = await db.stores.deliveries.unhandled(new Date('2026-11-01T11:00:00Z'), 5, 100);
  expect(unhandled.map((d) => [d.id, d.attempts, d.lastAttemptAt?.toISOString()])).toEqual([
    ['d-0', 1, at.toISOString()],
    ...['d-1', 'd-2', 'd-3', 'd-4'].map((id) => [id, 1, later.toISOString()]),
  ]);
});

test('an attempt is claimed once; a retry is counted and claimed as the next attempt; a handled delivery is not retried', async () => {
  const at = new Date('2026-11-02T10:00:00Z');
  expect(await db.stores.deliveries.record(received('e-1', at))).toBe(true);
  const claims = await Promise.all([db.stores.deliveries.claimAttempt('e-1', 1, at), db.stores.deliveries.claimAttempt('e-1', 1, at)]);
  expect(claims.filter(Boolean)).toHaveLength(1);
  const retryAt = new Date('2026-11-02T10:01:00Z');
  expect(await db.stores.deliveries.startAttempt('e-1', retryAt)).toBe(true);
  // Another replica claimed attempt 3 first: this one's retry is not made twice.
  expect(await db.stores.deliveries.claimAttempt('e-1', 3, retryAt)).toBe(true);
  expect(await db.stores.deliveries.startAttempt('e-1', retryAt)).toBe(false);
  const before = new Date('2026-11-02T11:00:00Z');
  expect((await db.stores.deliveries.unhandled(before, 5, 100)).find((d) => d.id === 'e-1')).toMatchObject({ attempts: 3, lastAttemptAt: retryAt, lastFailedAt: null, aliveAt: null });
  // What the sweep reads to tell an attempt still running from one that ended.
  const aliveAt = new Date('2026-11-02T10:02:00Z');
  const failedAt = new Date('2026-11-02T10:03:00Z');
  await db.stores.deliveries.stillHandling('e-1', aliveAt);
  await db.stores.deliveries.failed('e-1', 'GitHub answered 502', failedAt);
  expect((await db.stores.deliveries.unhandled(before, 5, 100)).find((d) => d.id === 'e-1')).toMatchObject({ aliveAt, lastFailedAt: failedAt });
  await db.stores.deliveries.handled('e-1', retryAt);
  expect((await db.stores.deliveries.unhandled(before, 5, 100)).map((d) => d.id)).not.toContain('e-1');
  expect(await db.stores.deliveries.record(received('e-1', before))).toBe(false);
});

test('a delivery given up is re-armed once by its redelivery (attempts start over, attempt 1 claimable again); handled or still retried, it is not', async () => {
  const at = new Date('2026-11-03T10:00:00Z');
  const store = db.stores.deliveries;
  expect(await store.record(received('f-1', at))).toBe(true);
  expect(await store.claimAttempt('f-1', 1, at)).toBe(true);
  // Still being retried (2 of 5 attempts): a redelivery is a duplicate.
  expect(await store.startAttempt('f-1', at)).toBe(true);
  expect(await store.rearm(received('f-1', at), 5)).toBe(false);
  for (let n = 3; n <= 5; n++) expect(await store.startAttempt('f-1', at)).toBe(true);
  const later = (minutes: number) => new Date(at.getTime() + minutes * 60_000);
  // Its fifth attempt may still be running a moment after it started, or after it last said so: a redelivery then
  // is not re-armed beside it.
  expect(await store.rearm(received('f-1', later(0.5)), 5)).toBe(false);
  await store.stillHandling('f-1', later(2.5));
  expect(await store.rearm(received('f-1', later(4)), 5)).toBe(false);
  await store.failed('f-1', 'GitHub answered 502', later(4.5));
  const sweepBefore = new Date('2026-11-04T11:00:00Z');
  expect((await store.unhandled(sweepBefore, 5, 100)).map((d) => d.id)).not.toContain('f-1');
  // Given up: two replicas receive GitHub's redelivery at once; one re-arms it.
  const again = new Date('2026-11-04T10:00:00Z');
  const redelivery = { ...received('f-1', again), payloadJson: '{"id":"f-1","again":true}' };
  expect((await Promise.all([store.rearm(redelivery, 5), store.rearm(redelivery, 5)])).filter(Boolean)).toHaveLength(1);
  expect(await store.claimAttempt('f-1', 1, again)).toBe(true);
  expect((await store.unhandled(sweepBefore, 5, 100)).find((d) => d.id === 'f-1')).toEqual({
    id: 'f-1',
    name: 'pull_request',
    payloadJson: redelivery.payloadJson,
    receivedAt: again,
    attempts: 1,
    lastAttemptAt: again,
    lastFailedAt: null,
    aliveAt: null,
  });
  // Its retries are claimed afresh too.
  expect(await store.startAttempt('f-1', again)).toBe(true);
  await store.handled('f-1', again);
  for (let n = 3; n <= 5; n++) await store.startAttempt('f-1', again);
  expect(await store.rearm(redelivery, 5)).toBe(false);
  expect(await store.rearm(received('unknown', again), 5)).toBe(false);
});

test('a 20 MiB body, recorded gzipped, is kept in one document and read back by the sweep as GitHub sent it', async () => {
  const body = JSON.stringify({ action: 'synchronize', padding: 'abc'.repeat(7 * 1024 * 1024) });
  const recorded = await recordedBody(body);
  expect(recorded).not.toBeNull();
  expect(recorded!.length).toBeLessThan(MAX_RECORDED_BODY_BYTES);
  const at = new Date('2026-11-02T10:00:00Z');
  expect(await db.stores.deliveries.record({ id: 'big-1', name: 'pull_request', payloadJson: recorded!, receivedAt: at })).toBe(true);
  const [found] = (await db.stores.deliveries.unhandled(new Date(at.getTime() + 1), 5, 10)).filter((d) => d.id === 'big-1');
  expect(found && (await bodyOf(found.payloadJson))).toBe(body);
});

test('the redelivery sweep: which ids were received (handled or not), and how far it got, kept across reads', async () => {
  const at = new Date('2026-11-03T10:00:00Z');
  expect(await db.stores.deliveries.record(received('r-1', at))).toBe(true);
  expect(await db.stores.deliveries.record(received('r-2', at))).toBe(true);
  await db.stores.deliveries.handled('r-2', at);
  expect([...(await db.stores.deliveries.received(['r-1', 'r-2', 'r-never']))].sort()).toEqual(['r-1', 'r-2']);

  expect(await db.stores.deliveries.redeliverySweptTo()).toBeNull();
  await db.stores.deliveries.setRedeliverySweptTo(at);
  const later = new Date('2026-11-03T10:05:00Z');
  await db.stores.deliveries.setRedeliverySweptTo(later);
  expect(await db.stores.deliveries.redeliverySweptTo()).toEqual(later);
  // Its document is none of the deliveries the retry sweep looks at.
  expect((await db.stores.deliveries.unhandled(new Date('2026-11-04T00:00:00Z'), 5, 100)).map((d) => d.id)).toEqual(expect.not.arrayContaining(['redelivery:swept-to']));
});
