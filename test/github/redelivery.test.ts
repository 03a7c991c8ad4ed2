/**
 * Asking GitHub again for the App's failed deliveries (src/github/redelivery.ts): which ones, in what order, how far
 * back, how often, and by which replica.
 */
import { redeliverFailed, REDELIVERIES, type AppClient } from '../../src/github/redelivery.js';

const silent = { info() {}, warn() {} };
const MINUTE = 60_000;
const EVERY = 5 * MINUTE;

interface Attempt {
  id: number;
  guid: string;
  at: number;
  /** 0: GitHub could not connect. */
  code: number;
}

/** GitHub's deliveries (newest first, `perPage` a page, paged by cursor) and the redeliveries asked of it. */
function github(attempts: Attempt[], options: { perPage?: number; refuse?: number[] } = {}) {
  const perPage = options.perPage ?? 100;
  const asked: number[] = [];
  const pagesRead: number[] = [];
  const client: AppClient = {
    async request(route, parameters = {}) {
      if (route.startsWith('POST')) {
        const id = parameters.delivery_id as number;
        if (options.refuse?.includes(id)) throw Object.assign(new Error('Not Found'), { status: 404 });
        asked.push(id);
        return { data: {}, headers: {} };
      }
      expect(parameters.status).toBeUndefined(); // Every delivery: GitHub's `failure` is 4xx and 5xx only.
      const start = Number(parameters.cursor ?? 0);
      pagesRead.push(start);
      const all = [...attempts].sort((a, b) => b.at - a.at || b.id - a.id);
      const page = all.slice(start, start + perPage).map((a) => ({ id: a.id, guid: a.guid, delivered_at: new Date(a.at).toISOString(), status_code: a.code, event: 'pull_request', action: 'labeled' }));
      return { data: page, headers: start + perPage < all.length ? { link: `<https://api.github.com/app/hook/deliveries?cursor=${start + perPage}>; rel="next"` } : {} };
    },
  };
  return { client, asked, pagesRead };
}

/** The delivery store's part the sweep uses, shared by the replicas of a test. */
function store(received: string[] = []) {
  const claims = new Set<string>();
  let sweptTo: Date | null = null;
  return {
    async received(ids: string[]) {
      return new Set(ids.filter((id) => received.includes(id)));
    },
    async claimAttempt(id: string, attempt: number) {
      const key = `${id}:${attempt}`;
      if (claims.has(key)) return false;
      claims.add(key);
      return true;
    },
    async redeliverySweptTo() {
      return sweptTo;
    },
    async setRedeliverySweptTo(at: Date) {
      sweptTo = at;
    },
  };
}

function sweeper(client: AppClient, deliveries: ReturnType<typeof store>, clock: { now: number }) {
  return redeliverFailed({ app: async () => client, deliveries, log: silent, everyMs: EVERY, now: () => clock.now });
}

test('events never answered 2xx and never received are asked for, oldest first, by their latest attempt; the others are not', async () => {
  const clock = { now: 100 * MINUTE };
  const gh = github([
    { id: 1, guid: 'down', at: 60 * MINUTE, code: 0 }, // could not connect (the service was down)
    { id: 2, guid: 'error', at: 61 * MINUTE, code: 502 },
    { id: 3, guid: 'down', at: 62 * MINUTE, code: 503 }, // 'down' redelivered by hand, failed again: its latest attempt
    { id: 4, guid: 'malformed', at: 63 * MINUTE, code: 400 }, // the event itself refused: it would be refused again
    { id: 5, guid: 'later-ok', at: 64 * MINUTE, code: 0 },
    { id: 6, guid: 'later-ok', at: 65 * MINUTE, code: 202 },
    { id: 7, guid: 'timed-out', at: 66 * MINUTE, code: 0 }, // GitHub gave up waiting, but we had recorded it
    { id: 8, guid: 'fine', at: 67 * MINUTE, code: 202 },
    // Not the event's fault (found by review): a proxy's 429 in a burst, a 404 while a deploy mounted the route, a
    // 401 while the webhook secret was being changed.
    { id: 9, guid: 'throttled', at: 68 * MINUTE, code: 429 },
    { id: 10, guid: 'deploying', at: 69 * MINUTE, code: 404 },
    { id: 11, guid: 'rotating', at: 70 * MINUTE, code: 401 },
    { id: 12, guid: 'too-large', at: 71 * MINUTE, code: 413 },
  ]);
  expect(await sweeper(gh.client, store(['timed-out']), clock)()).toBe(5);
  expect(gh.asked).toEqual([3, 2, 9, 10, 11]);
});

test('one replica sweeps a window; the next window reads back only to shortly before where the last got, also after a restart', async () => {
  const clock = { now: 1_000 * MINUTE };
  const attempts: Attempt[] = Array.from({ length: 5 }, (_, i) => ({ id: i + 1, guid: `old${i}`, at: clock.now - 2 * 60 * MINUTE + i, code: 0 }));
  const gh = github(attempts, { perPage: 2 });
  const shared = store();
  // The very first sweep looks back an hour: these are older (and read on one page).
  expect(await sweeper(gh.client, shared, clock)()).toBe(0);
  expect(await sweeper(gh.client, shared, clock)()).toBe(0); // another replica, the same window: it does not list
  expect(gh.pagesRead).toEqual([0]);

  clock.now += EVERY;
  attempts.push({ id: 6, guid: 'new', at: clock.now - MINUTE, code: 0 });
  gh.pagesRead.length = 0;
  // A replica started since (a sweeper of its own) goes on from where the last sweep got to.
  expect(await sweeper(gh.client, shared, clock)()).toBe(1);
  expect(gh.asked).toEqual([6]);
  expect(gh.pagesRead).toEqual([0]); // Its first page already reaches a delivery older than its window: no more pages.
});

test(`an event is redelivered at most ${REDELIVERIES} times over all replicas, even once its first failures are out of the window`, async () => {
  const clock = { now: 100 * MINUTE };
  const attempts: Attempt[] = [{ id: 1, guid: 'x', at: clock.now - MINUTE, code: 0 }];
  const gh = github(attempts);
  const shared = store();
  const replicas = [sweeper(gh.client, shared, clock), sweeper(gh.client, shared, clock)];
  for (let round = 0; round < REDELIVERIES + 3; round++) {
    await replicas[round % 2]!();
    // Each redelivery fails as well; the next sweep (an hour later) sees only the last one in its window.
    clock.now += 60 * MINUTE;
    attempts.push({ id: attempts.length + 1, guid: 'x', at: clock.now - MINUTE, code: 0 });
  }
  expect(gh.asked).toHaveLength(REDELIVERIES);
});

test('a redelivery GitHub refuses does not stop the others', async () => {
  const clock = { now: 100 * MINUTE };
  const gh = github(
    [
      { id: 1, guid: 'a', at: 90 * MINUTE, code: 0 },
      { id: 2, guid: 'b', at: 91 * MINUTE, code: 0 },
    ],
    { refuse: [1] },
  );
  expect(await sweeper(gh.client, store(), clock)()).toBe(1);
  expect(gh.asked).toEqual([2]);
});

test('past 100 redeliveries a sweep stops, and the next one goes on from the first event it did not ask for', async () => {
  const clock = { now: 1_000 * MINUTE };
  const attempts: Attempt[] = Array.from({ length: 130 }, (_, i) => ({ id: i + 1, guid: `e${i}`, at: clock.now - 50 * MINUTE + i * 1000, code: 0 }));
  const gh = github(attempts);
  const received: string[] = [];
  const shared = store(received);
  expect(await sweeper(gh.client, shared, clock)()).toBe(100);
  expect(gh.asked).toEqual(attempts.slice(0, 100).map((a) => a.id));
  received.push(...attempts.slice(0, 100).map((a) => a.guid)); // Their redeliveries went through.
  clock.now += EVERY;
  expect(await sweeper(gh.client, shared, clock)()).toBe(30);
  expect(gh.asked.slice(100)).toEqual(attempts.slice(100).map((a) => a.id));
});
