/**
 * GitHub deliveries on the real store: recorded with their first attempt
 * counted (the receiving replica handles them at once), in groups when they
 * arrive together, a redelivery told apart even inside a group; each attempt
 * claimed once; a retry counted and claimed; what is unhandled found by the sweep.
 */
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
  expect((await db.stores.deliveries.unhandled(before, 5, 100)).find((d) => d.id === 'e-1')).toMatchObject({ attempts: 3, lastAttemptAt: retryAt });
  await db.stores.deliveries.handled('e-1', retryAt);
  expect((await db.stores.deliveries.unhandled(before, 5, 100)).map((d) => d.id)).not.toContain('e-1');
  expect(await db.stores.deliveries.record(received('e-1', before))).toBe(false);
});
