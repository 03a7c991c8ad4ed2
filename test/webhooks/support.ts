import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { OutgoingEvent, WebhookEventType } from '../../src/ports/webhook-outbox.js';

/** One request as the receiver got it. */
export interface ReceivedDelivery {
  webhookId: string;
  timestamp: string;
  signature: string;
  body: string;
  headers: IncomingHttpHeaders;
  path: string;
  /** The status the receiver answered. */
  status: number;
  receivedAt: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedDelivery[];
  /** Webhook ids of requests as they arrive, before the receiver answers. */
  arrivals: string[];
  /** Signatures that did not verify with `standardwebhooks` (should stay empty). */
  verificationFailures: string[];
  /** The status to answer (a function of the request); 200 by default. */
  respond: (delivery: Omit<ReceivedDelivery, 'status' | 'receivedAt'>) => number | Promise<number>;
  /** Every secret here must verify every request (`Webhook.verify`). */
  secrets: string[];
  /** The clock `Webhook.verify` checks timestamps against (a test's fake clock); real time by default. */
  clock?: () => number;
  /** Distinct webhook ids delivered with a 2xx, in first-arrival order. */
  deliveredIds(): string[];
  close(): Promise<void>;
}

/** `Webhook.verify` against a given clock: its 5-minute tolerance reads Date.now. */
export function verifyAt(secret: string, body: string, headers: Record<string, string>, at?: number): unknown {
  const webhook = new Webhook(secret);
  if (at === undefined) return webhook.verify(body, headers);
  const realNow = Date.now;
  Date.now = () => at;
  try {
    return webhook.verify(body, headers);
  } finally {
    Date.now = realNow;
  }
}

/** A real HTTP receiver on 127.0.0.1 that verifies every delivery with the stock library. */
export async function startReceiver(secrets: string[] = []): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    arrivals: [],
    verificationFailures: [],
    respond: () => 200,
    secrets,
    deliveredIds() {
      const seen: string[] = [];
      for (const d of this.received) if (d.status >= 200 && d.status < 300 && !seen.includes(d.webhookId)) seen.push(d.webhookId);
      return seen;
    },
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const h = (name: string) => String(req.headers[name] ?? '');
        const base = { webhookId: h('webhook-id'), timestamp: h('webhook-timestamp'), signature: h('webhook-signature'), body, headers: req.headers, path: req.url ?? '/' };
        receiver.arrivals.push(base.webhookId);
        const signed = { 'webhook-id': base.webhookId, 'webhook-timestamp': base.timestamp, 'webhook-signature': base.signature };
        for (const secret of receiver.secrets) {
          try {
            verifyAt(secret, body, signed, receiver.clock?.());
          } catch (error) {
            receiver.verificationFailures.push(`${base.webhookId}: ${(error as Error).message}`);
          }
        }
        let status = 500;
        try {
          status = await receiver.respond(base);
        } finally {
          receiver.received.push({ ...base, status, receivedAt: Date.now() });
          if (!res.destroyed) {
            res.statusCode = status;
            if (status >= 300 && status < 400) res.setHeader('location', `http://127.0.0.1:${receiver.port}/redirected`);
            res.end('ok');
          }
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  receiver.port = port;
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** An event of `pr` in queue `q`, numbered `seq`, as the runner publishes them. */
export function queueEvent(seq: number, pr: number, type: WebhookEventType = 'pull_request.queued', options: { owner?: string; name?: string; queue?: string } = {}): OutgoingEvent {
  const queue = options.queue ?? 'q1';
  return {
    id: `evt_${queue}_${seq}_${pr}`,
    orderingKey: `${queue}:${pr}`,
    sequence: seq,
    payload: {
      type,
      timestamp: new Date().toISOString(),
      repository: { host: 'github.com', owner: options.owner ?? 'acme', name: options.name ?? 'widgets' },
      target_branch: 'main',
      pr_number: pr,
      author: 'octocat',
      batched: false,
      is_bisection: false,
      test_branch: null,
      test_branch_sha: null,
    },
  };
}

/** The sequence number inside an event id `evt_<queue>_<seq>_<pr>`. */
export const seqOf = (webhookId: string) => Number(webhookId.split('_')[2]);
export const prOf = (webhookId: string) => Number(webhookId.split('_')[3]);

export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const testKey = () => randomBytes(32);

/** Logs kept in memory, to assert what they carry and what they never carry. */
export function memoryLog() {
  const lines: string[] = [];
  const write = (level: string) => (details: object, message: string) => {
    lines.push(JSON.stringify({ level, message, ...details }, (_k, v: unknown) => (v instanceof Error ? { message: v.message, stack: v.stack } : v)));
  };
  return { lines, log: { info: write('info'), warn: write('warn'), error: write('error') } };
}

/** A controllable clock (ms since the epoch), starting now. */
export function fakeClock(start = Date.now()) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
    set(ms: number) {
      now = ms;
    },
  };
}
