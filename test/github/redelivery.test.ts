/**
 * Asking GitHub again for the App's failed deliveries (src/github/redelivery.ts): which ones, how far back, how often.
 */
import { redeliverFailed, REDELIVERIES, type AppClient } from '../../src/github/redelivery.js';

const silent = { info() {}, warn() {} };
const MINUTE = 60_000;

interface Attempt {
  id: number;
  guid: string;
  at: number;
}

/** GitHub's failed deliveries (newest first, two a page, paged by cursor) and the redeliveries asked of it. */
function github(failed: () => Attempt[]) {
  const asked: number[] = [];
  const pagesRead: number[] = [];
  const client: AppClient = {
    async request(route, parameters = {}) {
      if (route.startsWith('POST')) {
        asked.push(parameters.delivery_id as number);
        return { data: {}, headers: {} };
      }
      expect(parameters.status).toBe('failure');
      const start = Number(parameters.cursor ?? 0);
      pagesRead.push(start);
      const all = [...failed()].sort((a, b) => b.at - a.at);
      const page = all.slice(start, start + 2).map((a) => ({ id: a.id, guid: a.guid, delivered_at: new Date(a.at).toISOString(), event: 'pull_request', action: 'labeled' }));
      return { data: page, headers: start + 2 < all.length ? { link: `<https://api.github.com/app/hook/deliveries?cursor=${start + 2}>; rel="next"` } : {} };
    },
  };
  return { client, asked, pagesRead };
}

test('each failed event the service never received is asked for once, by its newest attempt; one received is not', async () => {
  const clock = { now: 100 * MINUTE };
  const failed: Attempt[] = [
    { id: 1, guid: 'a', at: 10 * MINUTE },
    { id: 2, guid: 'b', at: 20 * MINUTE },
    { id: 3, guid: 'a', at: 30 * MINUTE }, // a's first redelivery, asked by hand, failed too
    { id: 4, guid: 'c', at: 40 * MINUTE }, // received: it timed out at GitHub after the service recorded it
  ];
  const gh = github(() => failed);
  const sweep = redeliverFailed({ app: async () => gh.client, deliveries: { received: async (ids) => new Set(ids.filter((id) => id === 'c')) }, log: silent, now: () => clock.now });
  expect(await sweep()).toBe(2);
  expect(gh.asked.sort()).toEqual([2, 3]);
});

test('a later sweep reads back only to shortly before the last one began, and stops paging there', async () => {
  const clock = { now: 4 * 24 * 60 * MINUTE };
  const failed: Attempt[] = [1, 2, 3, 4, 5, 6].map((i) => ({ id: i, guid: `old${i}`, at: clock.now - 10 * 24 * 60 * MINUTE + i }));
  const gh = github(() => failed);
  const received = new Set<string>();
  const sweep = redeliverFailed({ app: async () => gh.client, deliveries: { received: async (ids) => new Set(ids.filter((id) => received.has(id))) }, log: silent, now: () => clock.now });
  // The first sweep of a process looks as far back as GitHub keeps deliveries (3 days): these are older.
  expect(await sweep()).toBe(0);
  expect(gh.pagesRead).toEqual([0]);

  clock.now += 5 * MINUTE;
  failed.push({ id: 7, guid: 'new', at: clock.now - MINUTE });
  gh.pagesRead.length = 0;
  expect(await sweep()).toBe(1);
  expect(gh.asked).toEqual([7]);
  expect(gh.pagesRead).toEqual([0]); // Its first page already reached deliveries older than the window.
});

test(`an event is redelivered at most ${REDELIVERIES} times, even once its first failures are out of the window`, async () => {
  const clock = { now: 100 * MINUTE };
  const failed: Attempt[] = [{ id: 1, guid: 'x', at: clock.now - MINUTE }];
  const gh = github(() => failed);
  const sweep = redeliverFailed({ app: async () => gh.client, deliveries: { received: async () => new Set() }, log: silent, now: () => clock.now });
  for (let round = 0; round < REDELIVERIES + 2; round++) {
    await sweep();
    // Each redelivery fails as well, and the next sweep (an hour later) sees only that one in its window.
    clock.now += 60 * MINUTE;
    failed.push({ id: failed.length + 1, guid: 'x', at: clock.now - MINUTE });
  }
  expect(gh.asked).toHaveLength(REDELIVERIES);
});
