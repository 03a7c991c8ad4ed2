import type { LightMyRequestResponse } from 'fastify';
import type { PullRequestState } from '../../src/domain/pull-request-state.js';
import { repo, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { forceEntryState } from '../support/force-entry-state.js';

/**
 * listPullRequests (API-SUPPLEMENT.md): filters `state` (one or a list, any
 * letter case), `since`/`until` (entry or conclusion in the window), paging
 * `take` (1..100, default 50) and an opaque `cursor`; answers
 * `{ pullRequests, nextCursor? }`, newest first.
 */

let harness: ApiHarness;
let token: string;
/** The server's clock; tests set it before each action they want dated. */
let clock = Date.parse('2032-06-01T00:00:00.000Z');
const setClock = (iso: string) => {
  clock = Date.parse(iso);
};

beforeAll(async () => {
  harness = await startApiHarness({ now: () => new Date(clock), prefix: 'list_prs' });
  token = await harness.tokenFor('acme');
});

afterAll(async () => {
  await harness?.close();
});

let repoCounter = 0;
async function freshQueue() {
  repoCounter += 1;
  const r = repo('acme', `list-${repoCounter}`);
  const res = await harness.post('/v1/createQueue', { repo: r, targetBranch: 'main' }, token);
  expect(res.statusCode).toBe(200);
  return r;
}

type Repo = ReturnType<typeof repo>;
type Listed = { prNumber: number; state: PullRequestState; id: string; isCurrentlySubmittedToQueue: boolean };

const post = (path: string, body: unknown) => harness.post(`/v1/${path}`, body, token);

async function submit(r: Repo, prNumber: number, at?: string) {
  if (at) setClock(at);
  const res = await post('submitPullRequest', { repo: r, targetBranch: 'main', pr: { number: prNumber } });
  expect(res.statusCode).toBe(200);
}

async function cancel(r: Repo, prNumber: number, at?: string) {
  if (at) setClock(at);
  const res = await post('cancelPullRequest', { repo: r, targetBranch: 'main', pr: { number: prNumber } });
  expect(res.statusCode).toBe(200);
}

/** Puts an entry where the engine would have put it, at the current clock. */
async function forceState(r: Repo, prNumber: number, state: PullRequestState, at?: string) {
  if (at) setClock(at);
  const queue = await harness.stores.queues.find(r, 'main');
  await harness.app.queueRunner.settled(queue!.id); // The runner writes the entry when it decides the submit.
  const entry = (await harness.stores.entries.find(queue!.id, prNumber))!;
  const when = new Date(clock);
  await forceEntryState(harness.stores, entry, state, state === 'MERGED' ? 'merged' : state === 'FAILED' ? 'failed_tests' : 'ready', when);
}

function list(r: Repo, filters: Record<string, unknown> = {}): Promise<LightMyRequestResponse> {
  return post('listPullRequests', { repo: r, targetBranch: 'main', ...filters });
}

async function listNumbers(r: Repo, filters: Record<string, unknown> = {}): Promise<number[]> {
  const res = await list(r, filters);
  expect(res.statusCode).toBe(200);
  return (res.json().pullRequests as Listed[]).map((p) => p.prNumber);
}

function expectPlainTextError(res: LightMyRequestResponse, status: number, pattern?: RegExp) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  expect(res.body.length).toBeGreaterThan(0);
  if (pattern) expect(res.body).toMatch(pattern);
}

/** A queue with one PR in each of several states, submitted a minute apart. */
async function queueWithStates() {
  const r = await freshQueue();
  await submit(r, 1, '2032-06-01T10:01:00Z'); // NOT_READY
  await submit(r, 2, '2032-06-01T10:02:00Z');
  await cancel(r, 2, '2032-06-01T10:02:30Z'); // CANCELLED
  await submit(r, 3, '2032-06-01T10:03:00Z');
  await forceState(r, 3, 'TESTING', '2032-06-01T10:03:30Z');
  await submit(r, 4, '2032-06-01T10:04:00Z');
  await forceState(r, 4, 'MERGED', '2032-06-01T10:04:30Z');
  await submit(r, 5, '2032-06-01T10:05:00Z');
  await forceState(r, 5, 'FAILED', '2032-06-01T10:05:30Z');
  await submit(r, 6, '2032-06-01T10:06:00Z');
  await forceState(r, 6, 'PENDING', '2032-06-01T10:06:30Z');
  return r;
}

describe('listPullRequests: response and filters', () => {
  it('lists every PR of the queue newest first, each shaped like the PR view', async () => {
    const r = await queueWithStates();
    const res = await list(r);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(body.nextCursor).toBeUndefined();
    const prs = body.pullRequests as Listed[];
    expect(prs.map((p) => p.prNumber)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(prs.map((p) => p.state)).toEqual(['PENDING', 'FAILED', 'MERGED', 'TESTING', 'CANCELLED', 'NOT_READY']);
    expect(prs.map((p) => p.isCurrentlySubmittedToQueue)).toEqual([true, false, false, true, false, true]);
    for (const pr of prs) {
      expect(pr).toEqual(
        expect.objectContaining({
          id: expect.stringMatching(/^[0-9a-f]{24}$/),
          readiness: expect.any(Object),
          stateChangedAt: expect.any(String),
          priorityValue: 100,
          noBatch: false,
        }),
      );
    }
  });

  it('filters by one state, in any letter case', async () => {
    const r = await queueWithStates();
    expect(await listNumbers(r, { state: 'CANCELLED' })).toEqual([2]);
    expect(await listNumbers(r, { state: 'cancelled' })).toEqual([2]);
    expect(await listNumbers(r, { state: 'Not_Ready' })).toEqual([1]);
    expect(await listNumbers(r, { state: 'testing' })).toEqual([3]);
    expect(await listNumbers(r, { state: 'PENDING_FAILURE' })).toEqual([]);
  });

  it('filters by a list of states, in any letter case', async () => {
    const r = await queueWithStates();
    expect(await listNumbers(r, { state: ['merged', 'FAILED', 'Cancelled'] })).toEqual([5, 4, 2]);
    expect(await listNumbers(r, { state: ['not_ready', 'pending', 'testing'] })).toEqual([6, 3, 1]);
    expect(await listNumbers(r, { state: ['MERGED', 'merged'] })).toEqual([4]);
  });

  it.each([
    ['an unknown state', 'DONE'],
    ['an empty list', []],
    ['a list with an unknown state', ['MERGED', 'DONE']],
    ['a number', 3],
    ['null', null],
    ['an object', { $in: ['MERGED'] }],
    ['a list longer than there are states', Array.from({ length: 9 }, () => 'MERGED')],
  ])('rejects state as %s with a 400', async (_label, state) => {
    const r = await freshQueue();
    expectPlainTextError(await list(r, { state }), 400, /state/);
  });

  it('never lists PRs of other queues', async () => {
    const a = await freshQueue();
    const b = await freshQueue();
    await submit(a, 11, '2032-06-01T11:00:00Z');
    await submit(b, 12, '2032-06-01T11:00:01Z');
    expect(await listNumbers(a)).toEqual([11]);
    expect(await listNumbers(b)).toEqual([12]);
  });

  it('answers an empty page for a queue without PRs', async () => {
    const r = await freshQueue();
    const res = await list(r);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ pullRequests: [] });
  });

  it('answers 404 for an unknown queue', async () => {
    const r = await freshQueue();
    expectPlainTextError(await post('listPullRequests', { repo: r, targetBranch: 'nope' }), 404);
    expectPlainTextError(await post('listPullRequests', { repo: repo('acme', 'no-such-repo'), targetBranch: 'main' }), 404);
  });
});

describe('listPullRequests: since/until window', () => {
  /**
   * #21 entered at 09:00 and was cancelled at 12:00; #22 entered at 10:00;
   * #23 entered at 11:00 and merged at 13:00; #24 entered at 14:00.
   */
  async function windowQueue() {
    const r = await freshQueue();
    await submit(r, 21, '2032-07-01T09:00:00Z');
    await submit(r, 22, '2032-07-01T10:00:00Z');
    await submit(r, 23, '2032-07-01T11:00:00Z');
    await cancel(r, 21, '2032-07-01T12:00:00Z');
    await forceState(r, 23, 'MERGED', '2032-07-01T13:00:00Z');
    await submit(r, 24, '2032-07-01T14:00:00Z');
    return r;
  }

  it('matches PRs whose entry falls in the window', async () => {
    const r = await windowQueue();
    expect(await listNumbers(r, { since: '2032-07-01T09:30:00Z', until: '2032-07-01T11:30:00Z' })).toEqual([23, 22]);
  });

  it('matches PRs whose conclusion falls in the window', async () => {
    const r = await windowQueue();
    expect(await listNumbers(r, { since: '2032-07-01T11:30:00Z', until: '2032-07-01T12:30:00Z' })).toEqual([21]);
    expect(await listNumbers(r, { since: '2032-07-01T12:30:00Z', until: '2032-07-01T13:30:00Z' })).toEqual([23]);
  });

  it('takes since alone and until alone', async () => {
    const r = await windowQueue();
    expect(await listNumbers(r, { since: '2032-07-01T12:30:00Z' })).toEqual([24, 23]);
    expect(await listNumbers(r, { until: '2032-07-01T09:30:00Z' })).toEqual([21]);
    expect(await listNumbers(r, { since: '2032-07-01T15:00:00Z' })).toEqual([]);
  });

  it('understands time zone offsets', async () => {
    const r = await windowQueue();
    // 11:30+02:00 is 09:30Z; 13:30+02:00 is 11:30Z.
    expect(await listNumbers(r, { since: '2032-07-01T11:30:00+02:00', until: '2032-07-01T13:30:00+02:00' })).toEqual([23, 22]);
  });

  it('combines the window with a state filter', async () => {
    const r = await windowQueue();
    expect(await listNumbers(r, { state: 'NOT_READY', since: '2032-07-01T09:30:00Z', until: '2032-07-01T11:30:00Z' })).toEqual([22]);
  });

  it('rejects since later than until with a 400', async () => {
    const r = await windowQueue();
    expectPlainTextError(await list(r, { since: '2032-07-01T12:00:00Z', until: '2032-07-01T11:00:00Z' }), 400, /since/);
  });

  it.each([
    ['since', 'yesterday'],
    ['since', '2032-13-01T00:00:00Z'],
    ['until', '2032-02-30T00:00:00Z'],
    ['until', 1719820800000],
    ['since', { $gt: '2032-01-01T00:00:00Z' }],
    ['until', ''],
  ])('rejects %s = %p with a 400 naming the field', async (field, value) => {
    const r = await freshQueue();
    expectPlainTextError(await list(r, { [field]: value }), 400, new RegExp(field));
  });
});

describe('listPullRequests: paging', () => {
  it('pages through 7 PRs three at a time: 3 + 3 + 1, newest first, no duplicates', async () => {
    const r = await freshQueue();
    for (let n = 1; n <= 7; n += 1) await submit(r, 100 + n, `2032-08-01T10:0${n}:00Z`);

    const seen: number[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page += 1) {
      const res = await list(r, { take: 3, ...(cursor ? { cursor } : {}) });
      expect(res.statusCode).toBe(200);
      const body = res.json() as { pullRequests: Listed[]; nextCursor?: string };
      sizes.push(body.pullRequests.length);
      seen.push(...body.pullRequests.map((p) => p.prNumber));
      cursor = body.nextCursor;
      if (!cursor) break;
      expect(typeof cursor).toBe('string');
    }
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual([107, 106, 105, 104, 103, 102, 101]);
  });

  it('pages correctly when every PR was submitted in the same instant', async () => {
    const r = await freshQueue();
    setClock('2032-08-02T10:00:00Z');
    for (let n = 1; n <= 7; n += 1) await submit(r, 200 + n);
    const all = await listNumbers(r);
    expect(all).toHaveLength(7);

    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const body = (await list(r, { take: 2, ...(cursor ? { cursor } : {}) })).json() as { pullRequests: Listed[]; nextCursor?: string };
      seen.push(...body.pullRequests.map((p) => p.prNumber));
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(pages).toBe(4);
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(7);
  });

  it('leaves nextCursor out when the last page is exactly full', async () => {
    const r = await freshQueue();
    for (let n = 1; n <= 6; n += 1) await submit(r, 300 + n, `2032-08-03T10:0${n}:00Z`);
    const first = (await list(r, { take: 3 })).json();
    expect(first.pullRequests).toHaveLength(3);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = (await list(r, { take: 3, cursor: first.nextCursor })).json();
    expect(second.pullRequests).toHaveLength(3);
    expect(second.nextCursor).toBeUndefined();
  });

  it('pages within a state filter', async () => {
    const r = await freshQueue();
    for (let n = 1; n <= 6; n += 1) await submit(r, 400 + n, `2032-08-04T10:0${n}:00Z`);
    await cancel(r, 402, '2032-08-04T11:00:00Z');
    await cancel(r, 404, '2032-08-04T11:01:00Z');
    await cancel(r, 405, '2032-08-04T11:02:00Z');
    const first = (await list(r, { state: 'CANCELLED', take: 2 })).json();
    expect(first.pullRequests.map((p: Listed) => p.prNumber)).toEqual([405, 404]);
    const second = (await list(r, { state: 'CANCELLED', take: 2, cursor: first.nextCursor })).json();
    expect(second.pullRequests.map((p: Listed) => p.prNumber)).toEqual([402]);
    expect(second.nextCursor).toBeUndefined();
  });

  it('defaults to pages of 50', async () => {
    const r = await freshQueue();
    const queue = await harness.stores.queues.find(r, 'main');
    const base = Date.parse('2032-08-05T00:00:00Z');
    for (let n = 1; n <= 52; n += 1) {
      const at = new Date(base + n * 1000);
      const inserted = await harness.stores.entries.insert({
        queueId: queue!.id,
        prNumber: 500 + n,
        attempt: 1,
        state: 'NOT_READY',
        priority: 100,
        noBatch: false,
        submittedAt: at,
        stateChangedAt: at,
        concludedAt: null,
        facts: null,
        timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }],
      });
      expect(inserted.ok).toBe(true);
    }
    const first = (await list(r)).json();
    expect(first.pullRequests).toHaveLength(50);
    expect(first.pullRequests[0].prNumber).toBe(552);
    const second = (await list(r, { cursor: first.nextCursor })).json();
    expect(second.pullRequests.map((p: Listed) => p.prNumber)).toEqual([502, 501]);
    expect(second.nextCursor).toBeUndefined();
    expect((await list(r, { take: 100 })).json().pullRequests).toHaveLength(52);
  });

  it('accepts take 1 and 100', async () => {
    const r = await freshQueue();
    await submit(r, 601, '2032-08-06T10:00:00Z');
    await submit(r, 602, '2032-08-06T10:01:00Z');
    const one = (await list(r, { take: 1 })).json();
    expect(one.pullRequests.map((p: Listed) => p.prNumber)).toEqual([602]);
    expect(one.nextCursor).toEqual(expect.any(String));
    expect(await listNumbers(r, { take: 100 })).toEqual([602, 601]);
  });

  it.each([0, 101, -1, 1.5, '10a', '1.5', null, 1e21])('rejects take %p with a 400', async (take) => {
    const r = await freshQueue();
    expectPlainTextError(await list(r, { take }), 400, /take/);
  });

  it('names the real bound when take is huge', async () => {
    const r = await freshQueue();
    expectPlainTextError(await list(r, { take: 1e20 }), 400, /take' must be at most 100\b/);
  });

  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  it.each([
    ['garbage', 'garbage'],
    ['punctuation', '!!!***'],
    ['base64 of a non-JSON text', Buffer.from('hello').toString('base64url')],
    ['base64 of null', b64(null)],
    ['base64 of a number', b64(42)],
    ['a cursor with a bad id', b64({ t: 0, id: 'xyz' })],
    ['a cursor with an id operator', b64({ t: 0, id: { $gt: '' } })],
    ['a cursor with a string time', b64({ t: '0', id: '0123456789abcdef01234567' })],
    ['a cursor with an out-of-range time', b64({ t: 1e300, id: '0123456789abcdef01234567' })],
    ['a cursor with a negative out-of-range time', b64({ t: -1e20, id: '0123456789abcdef01234567' })],
  ])('rejects %s as cursor with a 400', async (_label, cursor) => {
    const r = await freshQueue();
    await submit(r, 701, '2032-08-07T10:00:00Z');
    expectPlainTextError(await list(r, { cursor }), 400, /cursor/);
  });

  it.each([
    ['an empty string', ''],
    ['a number', 12],
    ['an object', { t: 0 }],
  ])('rejects cursor as %s with a 400', async (_label, cursor) => {
    const r = await freshQueue();
    expectPlainTextError(await list(r, { cursor }), 400, /cursor/);
  });
});
