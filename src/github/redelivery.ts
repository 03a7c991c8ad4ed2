import type { DeliveryStore } from '../ports/delivery-store.js';

/**
 * GitHub never redelivers a webhook delivery that failed: an event sent while the service was down (a deploy, a
 * crash, a network cut) or answered with an error is lost, so a label added then never queues its PR, a `/mq`
 * command is never answered, a push never cancels. GitHub's own answer is to list the App's deliveries and ask for
 * the failed ones again ("Automatically redelivering failed deliveries for a GitHub App webhook"); this does that.
 * Every sweep lists the deliveries that failed (`GET /app/hook/deliveries?status=failure`, newest first, with the
 * App's JWT) back to shortly before the last sweep began (at the first sweep of a process, as far back as GitHub
 * keeps them), and asks GitHub to deliver again (`POST .../attempts`) each event this service never received, at
 * most REDELIVERIES times. A delivery received twice is applied once (by its id, webhook-route.ts), so two replicas
 * asking for the same one cost a request, nothing more.
 */

/** Redeliveries asked for one event: after the first delivery and these all failed, it is given up (and logged). */
export const REDELIVERIES = 2;
/** GitHub keeps an App's deliveries for 3 days. */
const KEPT_BY_GITHUB_MS = 3 * 24 * 60 * 60 * 1000;
/** A sweep looks this far before the last one began: a delivery made during it may be listed late. */
const OVERLAP_MS = 10 * 60 * 1000;

/** The part of an Octokit authenticated as the App (its JWT) this uses. */
export interface AppClient {
  request(route: string, parameters?: Record<string, unknown>): Promise<{ data: unknown; headers: { link?: string } }>;
}

interface DeliveryItem {
  id: number;
  guid: string;
  delivered_at: string;
  event: string;
  action?: string | null;
}

export interface RedeliveryLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export function redeliverFailed(options: { app: () => Promise<AppClient>; deliveries: Pick<DeliveryStore, 'received'>; log: RedeliveryLog; now?: () => number }): () => Promise<number> {
  const now = options.now ?? Date.now;
  let lastSweepAt: number | null = null;
  /** Redeliveries this process asked for, by event: a sweep's window may no longer list the failures before them. */
  const asked = new Map<string, { times: number; at: number }>();
  return async () => {
    const startedAt = now();
    for (const [guid, { at }] of asked) if (at < startedAt - KEPT_BY_GITHUB_MS) asked.delete(guid);
    const since = lastSweepAt === null ? startedAt - KEPT_BY_GITHUB_MS : lastSweepAt - OVERLAP_MS;
    const client = await options.app();
    const failed = await failedSince(client, since);
    // Newest first: the first one seen of an event is the attempt to ask again.
    const byEvent = new Map<string, { newest: DeliveryItem; failures: number }>();
    for (const item of failed) {
      const known = byEvent.get(item.guid);
      if (known) known.failures++;
      else byEvent.set(item.guid, { newest: item, failures: 1 });
    }
    const received = await options.deliveries.received([...byEvent.keys()]);
    let requested = 0;
    for (const [guid, { newest, failures }] of byEvent) {
      if (received.has(guid)) continue; // Answered, so in our hands (GitHub may still list an attempt that timed out).
      const where = { delivery: guid, event: newest.event, action: newest.action ?? undefined, failures };
      const redelivered = Math.max(failures - 1, asked.get(guid)?.times ?? 0);
      if (redelivered >= REDELIVERIES) {
        options.log.warn(where, 'a webhook delivery failed every time it was redelivered; given up (GitHub\'s "Redeliver" sends it again)');
        continue;
      }
      await client.request('POST /app/hook/deliveries/{delivery_id}/attempts', { delivery_id: newest.id });
      asked.set(guid, { times: redelivered + 1, at: startedAt });
      options.log.info(where, 'a webhook delivery this service never received is redelivered');
      requested++;
    }
    lastSweepAt = startedAt;
    return requested;
  };
}

/** The failed deliveries made since `since`, newest first, page by page until an older one. */
async function failedSince(client: AppClient, since: number): Promise<DeliveryItem[]> {
  const found: DeliveryItem[] = [];
  let cursor: string | null = null;
  for (;;) {
    const page = await client.request('GET /app/hook/deliveries', { per_page: 100, status: 'failure', ...(cursor ? { cursor } : {}) });
    const items = (Array.isArray(page.data) ? page.data : []) as DeliveryItem[];
    for (const item of items) {
      if (Date.parse(item.delivered_at) < since) return found;
      found.push(item);
    }
    cursor = nextCursor(page.headers.link);
    if (cursor === null || items.length === 0) return found;
  }
}

function nextCursor(link: string | undefined): string | null {
  const next = link?.match(/<([^>]+)>;\s*rel="next"/)?.[1];
  return next ? new URL(next).searchParams.get('cursor') : null;
}
