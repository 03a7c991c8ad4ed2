/**
 * GET /ui/live over a real socket: a client gone while the stream was being
 * set up leaves nothing behind; a change made between the versions read at
 * connect and the first poll is told; a credential that ends (sign-out,
 * expiry, revocation) ends the stream at the next heartbeat; a queue created
 * or deleted after the connect is told and (created) watched. (Found by review.)
 */
import { connect, type AddressInfo, type Socket } from 'node:net';
import Fastify from 'fastify';
import type { ApiDeps } from '../../src/api/deps.js';
import { dashboardPlugin } from '../../src/dashboard/dashboard-plugin.js';
import { LiveUpdates } from '../../src/dashboard/live-updates.js';
import type { Stores } from '../../src/ports/stores.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The service's stream route over stores the test controls: listing takes `listMs`; the token holds while `valid`. */
async function liveServer(options: { listMs?: number; maxStreamsPerToken?: number } = {}) {
  const versions = new Map<string, number>();
  const auth = { valid: true };
  const queueIds = ['q1'];
  const listings = { count: 0 };
  const stores = {
    engine: { cursors: async (queueId: string) => ({ recordedThrough: versions.get(queueId) ?? 0, actedThrough: 0 }) },
    queues: {
      listForOrg: async () => {
        listings.count++;
        await sleep(options.listMs ?? 0);
        return queueIds.map((id) => ({ id }));
      },
    },
  } as unknown as Stores;
  const deps = {
    stores,
    tokens: { authenticate: async () => (auth.valid ? { id: 't', host: 'sandbox', owner: 'demo', revokedAt: null } : null) },
    now: () => new Date(),
  } as unknown as ApiDeps;
  const live = new LiveUpdates(stores, 60_000);
  const app = Fastify();
  await app.register(dashboardPlugin(deps, live, { sandbox: false, uiRoot: '/nonexistent', heartbeatMs: 100, ...(options.maxStreamsPerToken ? { maxStreamsPerToken: options.maxStreamsPerToken } : {}) }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  // A raw socket, not node:http's client: a test file that ran before in the same Jest worker may have left nock's
  // interceptors around node:http (github-fixtures.ts now takes them off), and through them a destroy() did not
  // always reach the real socket.
  const open = () => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('error', () => undefined);
    socket.write(`GET /ui/live HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nx-api-token: mq_x\r\n\r\n`);
    return socket;
  };
  const close = async () => {
    live.stop();
    await app.close();
  };
  return { versions, auth, queueIds, listings, live, open, close };
}

/** The stream's text so far (the raw answer: status line, headers and chunks), and whether the server ended it. */
function reading(socket: Socket) {
  const seen = { text: '', ended: false };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    seen.text += chunk;
    // The answer's last chunk: the server ended it (the socket itself may stay open for the next request).
    if (seen.text.endsWith('\r\n0\r\n\r\n')) seen.ended = true;
  });
  socket.on('end', () => (seen.ended = true));
  return seen;
}

test.each([0, 50, 150])('a client that leaves %i ms into setting up the stream leaves no watcher behind', async (leaveAfterMs) => {
  const server = await liveServer({ listMs: 200 });
  try {
    const client = server.open();
    await sleep(leaveAfterMs);
    client.destroy(); // the page went away before or while the server was reading
    // Waited for, not slept on: on a loaded machine the loop can run the listing's timer and a fixed sleep's in one
    // turn, before the server has read the client's end at all. A watcher left behind stays for good and fails this.
    await sleep(300);
    await until(() => server.live.watchedQueues === 0);
    expect(server.live.watchedQueues).toBe(0);
  } finally {
    await server.close();
  }
});

test('a change between the connect and the first poll is told (the page read its views on hello, before it)', async () => {
  const server = await liveServer();
  try {
    const seen = reading(server.open());
    await until(() => seen.text.includes('event: hello'));
    server.versions.set('q1', 1); // decided right after the page read its views
    await server.live.poll();
    await until(() => seen.text.includes('event: queue'));
    expect(seen.text).toContain('event: queue\ndata: {"queueId":"q1","version":1}');
  } finally {
    await server.close();
  }
});

test('a credential that ends ends the stream at the next heartbeat', async () => {
  const server = await liveServer();
  try {
    const seen = reading(server.open());
    await until(() => seen.text.includes(': still here'));
    expect(seen.ended).toBe(false);
    server.auth.valid = false; // signed out, expired or revoked
    await until(() => seen.ended);
    expect(seen.ended).toBe(true);
    expect(server.live.watchedQueues).toBe(0);
  } finally {
    await server.close();
  }
});

test('a queue created after the connect is told at the next heartbeat and watched from then on; one deleted is told and forgotten', async () => {
  const server = await liveServer();
  try {
    const seen = reading(server.open());
    await until(() => seen.text.includes('event: hello'));
    expect(server.live.watchedQueues).toBe(1);
    server.versions.set('q2', 3);
    server.queueIds.push('q2'); // created by someone else meanwhile
    await until(() => seen.text.includes('"queueId":"q2"'));
    expect(seen.text).toContain('event: queue\ndata: {"queueId":"q2","version":3}');
    expect(server.live.watchedQueues).toBe(2);
    server.versions.set('q2', 4); // decided: told like any watched queue's change
    await server.live.poll();
    await until(() => seen.text.includes('"queueId":"q2","version":4'));
    expect(seen.text).toContain('event: queue\ndata: {"queueId":"q2","version":4}');
    server.queueIds.splice(0, 1); // q1 deleted
    await until(() => seen.text.includes('"queueId":"q1","version":-1'));
    expect(seen.text).toContain('event: queue\ndata: {"queueId":"q1","version":-1}');
    expect(server.live.watchedQueues).toBe(1);
  } finally {
    await server.close();
  }
});

test('one token holds at most so many streams: one more is a 429 naming why, and a stream ended makes room (found by review)', async () => {
  const server = await liveServer({ maxStreamsPerToken: 2 });
  try {
    const first = server.open();
    const seenFirst = reading(first);
    const seenSecond = reading(server.open());
    await until(() => seenFirst.text.includes('event: hello') && seenSecond.text.includes('event: hello'));
    const third = reading(server.open());
    await until(() => third.text.includes('HTTP/1.1 429'));
    expect(third.text).toMatch(/HTTP\/1\.1 429[\s\S]*live streams open already/);
    first.destroy();
    await sleep(100);
    const fourth = reading(server.open());
    await until(() => fourth.text.includes('event: hello'));
    expect(fourth.text).toContain('HTTP/1.1 200');
  } finally {
    await server.close();
  }
});

test("streams of one organization share one listing of its queues per heartbeat, however many are open (found by review)", async () => {
  const server = await liveServer();
  try {
    const streams = [reading(server.open()), reading(server.open()), reading(server.open())];
    await until(() => streams.every((s) => s.text.includes('event: hello')));
    const atConnect = server.listings.count; // one each to start
    await sleep(1_000); // about ten heartbeats of 100 ms
    const heartbeats = streams[0]!.text.split(': still here').length - 1;
    expect(heartbeats).toBeGreaterThanOrEqual(5);
    // One listing per stream per heartbeat would be three times the heartbeats.
    expect(server.listings.count - atConnect).toBeLessThanOrEqual(heartbeats + 2);
  } finally {
    await server.close();
  }
});

/** Waits (up to 5 s: the machine may be busy) until the condition holds. */
async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition() && waited < 5_000; waited += 20) await sleep(20);
}
