import autocannon from 'autocannon';
import { cpuMeter } from './process-cpu.js';

/** What one load run measured. */
export interface LoadResult {
  name: string;
  /** Connections (closed loop), or at most this many sockets (open loop). */
  connections: number;
  /** Open loop (open-loop.ts): requests sent per second whatever the answers; absent for autocannon's closed loop. */
  offeredPerSecond?: number;
  durationSeconds: number;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-2xx answers plus errors and time-outs. */
  errors: number;
  /** CPU ms per request of the processes named in `cpu` (the server, the database), from /proc; null where unreadable. */
  cpuMsPerRequest?: Record<string, number | null>;
  /** What the errors were: answers by status code outside 2xx, connection errors, time-outs. */
  errorKinds?: { non2xx: Record<string, number>; connectionErrors: number; timeouts: number };
}

/**
 * Drives one endpoint with autocannon for a while; `body(i)` gives the i-th
 * request's body (each request its own PR, its own delivery id...).
 */
export async function drive(options: {
  name: string;
  url: string;
  connections: number;
  durationSeconds: number;
  headers?: Record<string, string>;
  body: (i: number) => string;
  headersFor?: (i: number, body: string) => Record<string, string>;
  /** Processes whose CPU time per request to measure over the run, by name. */
  cpu?: Record<string, number | undefined>;
}): Promise<LoadResult> {
  let i = 0;
  const meter = options.cpu ? cpuMeter(options.cpu) : null;
  const result = await autocannon({
    url: options.url,
    method: 'POST',
    connections: options.connections,
    duration: options.durationSeconds,
    timeout: 10,
    headers: { 'content-type': 'application/json', ...options.headers },
    requests: [
      {
        setupRequest: (request) => {
          const n = i++;
          const body = options.body(n);
          return { ...request, body, headers: { ...request.headers, ...options.headersFor?.(n, body) } };
        },
      },
    ],
  });
  const errors = result.non2xx + result.errors + result.timeouts;
  const cpuMsPerRequest = meter?.perRequest(result.requests.total);
  return {
    name: options.name,
    connections: options.connections,
    durationSeconds: options.durationSeconds,
    requests: result.requests.total,
    requestsPerSecond: result.requests.total / Math.max(1, result.duration),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors,
    ...(cpuMsPerRequest ? { cpuMsPerRequest } : {}),
    ...(errors > 0
      ? {
          errorKinds: {
            non2xx: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).filter(([code]) => !code.startsWith('2')).map(([code, stat]) => [code, stat?.count ?? 0])),
            connectionErrors: result.errors,
            timeouts: result.timeouts,
          },
        }
      : {}),
  };
}

/** Sequential calls, each timed: latency without queueing behind other requests. */
/**
 * Two kinds of call one after the other, alternating (a, b, a, b...): each side is timed under the same
 * conditions (the database's size, background work, the collector), so their ratio says what differs between them.
 */
export async function timeInterleaved(
  count: number,
  a: (i: number) => Promise<void>,
  b: (i: number) => Promise<void>,
): Promise<[Awaited<ReturnType<typeof timeSequential>>, Awaited<ReturnType<typeof timeSequential>>]> {
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < count; i++) {
    for (const [side, call] of [a, b].entries()) {
      const started = performance.now();
      await call(i);
      times[side]?.push(performance.now() - started);
    }
  }
  return [statsOf(times[0]), statsOf(times[1])];
}

/** Count, mean, p50 and p99 of some latencies in ms. */
export function statsOf(times: number[]): { count: number; meanMs: number; p50Ms: number; p99Ms: number } {
  const sorted = [...times].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  return { count: sorted.length, meanMs: sorted.reduce((sum, t) => sum + t, 0) / sorted.length, p50Ms: at(0.5), p99Ms: at(0.99) };
}

export async function timeSequential(count: number, call: (i: number) => Promise<void>): Promise<{ count: number; meanMs: number; p50Ms: number; p99Ms: number }> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await call(i);
    times.push(performance.now() - started);
  }
  return statsOf(times);
}
