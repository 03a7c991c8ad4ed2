import type { DeliveryStore } from '../ports/delivery-store.js';

/**
 * GitHub never redelivers a webhook delivery that failed: an event sent while the service was down (a deploy, a
 * crash, a network cut) or answered with a server error is lost, so a label added then never queues its PR, a `/mq`
 * command is never answered, a push never cancels. GitHub's own answer is to list the App's deliveries and ask for
 * the failed ones again ("Automatically redelivering failed deliveries for a GitHub App webhook"); this does that.
 *
 * One replica a sweep window (a claim under a unique key) lists the App's deliveries (`GET /app/hook/deliveries`,
 * newest first, with the App's JWT) back to shortly before where the last sweep got to (kept in the database, so a
 * restart after downtime reads back over it). Every delivery is listed, not only `status=failure`: GitHub documents
 * that filter as a 4xx or 5xx answer, and does not say what it records when it could not connect at all. Each event
 * (guid) with no 2xx answer that this service never received is asked for again (`POST .../attempts`), oldest first
 * (commands and labels apply in the order they were given), at most REDELIVERIES times in all (claims under unique
 * keys, so replicas do not ask twice). A 4xx answer to an event never received is asked again too (found by review: a
 * proxy's 429 or 408 in a burst, a 404 while a deploy mounted the route, a 401 while the webhook secret was being
 * changed are not the event's fault), unless it says the event itself is refused whatever the moment: 400 (malformed),
 * 413 (too large), 415. A delivery received twice is applied once, by its id.
 */

/** Answers that refuse the event itself: asked again, it would be refused again. */
const REFUSED_FOR_GOOD = new Set([400, 413, 415]);

/** Redeliveries asked for one event, over all replicas: after these failed as well it is given up (and logged). */
export const REDELIVERIES = 2;
/** Looked back at the very first sweep (nothing kept yet). */
const FIRST_LOOK_BACK_MS = 60 * 60 * 1000;
/** GitHub keeps an App's deliveries for 3 days: a sweep never looks further back. */
const KEPT_BY_GITHUB_MS = 3 * 24 * 60 * 60 * 1000;
/** A sweep looks this far before where the last one got to: a delivery made during it may be listed late. */
const OVERLAP_MS = 10 * 60 * 1000;
/** Redeliveries asked in one sweep; the rest (the oldest events first are asked) wait for the next. */
const ASKED_PER_SWEEP = 100;

/** The part of an Octokit authenticated as the App (its JWT) this uses. */
export interface AppClient {
  request(route: string, parameters?: Record<string, unknown>): Promise<{ data: unknown; headers: { link?: string } }>;
}

interface DeliveryItem {
  id: number;
  guid: string;
  delivered_at: string;
  status_code: number;
  event: string;
  action?: string | null;
}

export interface RedeliveryLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

type Store = Pick<DeliveryStore, 'received' | 'claimAttempt' | 'redeliverySweptTo' | 'setRedeliverySweptTo'>;

/** A sweep (run it every `everyMs`, the width of the window one replica claims); answers the redeliveries it asked. */
export function redeliverFailed(options: { app: () => Promise<AppClient>; deliveries: Store; log: RedeliveryLog; everyMs: number; now?: () => number }): () => Promise<number> {
  const { deliveries, log } = options;
  const now = options.now ?? Date.now;
  return async () => {
    const startedAt = now();
    if (!(await deliveries.claimAttempt('redelivery-sweep', Math.floor(startedAt / options.everyMs), new Date(startedAt)))) return 0;
    const sweptTo = (await deliveries.redeliverySweptTo())?.getTime() ?? startedAt - FIRST_LOOK_BACK_MS;
    const since = Math.max(sweptTo - OVERLAP_MS, startedAt - KEPT_BY_GITHUB_MS);
    const client = await options.app();
    const events = eventsSince(await deliveriesSince(client, since));
    const received = await deliveries.received([...events.keys()]);
    let requested = 0;
    // Where the next sweep starts: now, unless this one stopped at its cap before an event it had to ask for.
    let reached = startedAt;
    for (const [guid, event] of events) {
      if (event.answered || received.has(guid)) continue; // In our hands (GitHub may still list an attempt that timed out).
      if (REFUSED_FOR_GOOD.has(event.latest.status_code)) continue;
      if (requested >= ASKED_PER_SWEEP) {
        reached = Date.parse(event.first.delivered_at);
        break;
      }
      const where = { delivery: guid, event: event.latest.event, action: event.latest.action ?? undefined, statusCode: event.latest.status_code };
      const turn = await claimTurn(deliveries, guid, startedAt);
      if (turn === null) {
        log.warn(where, `a webhook delivery failed after ${REDELIVERIES} redeliveries; given up (GitHub's "Redeliver" sends it again)`);
        continue;
      }
      try {
        await client.request('POST /app/hook/deliveries/{delivery_id}/attempts', { delivery_id: event.latest.id });
        log.info({ ...where, redelivery: turn }, 'a webhook delivery this service never received is redelivered');
        requested++;
      } catch (error) {
        // This one only (gone from GitHub's list, say): the others are still asked for.
        log.warn({ ...where, err: error }, 'GitHub refused to redeliver a webhook delivery');
      }
    }
    await deliveries.setRedeliverySweptTo(new Date(reached));
    return requested;
  };
}

/** Each event's first and latest attempts, and whether any was answered 2xx; oldest event first. */
function eventsSince(items: DeliveryItem[]): Map<string, { first: DeliveryItem; latest: DeliveryItem; answered: boolean }> {
  const events = new Map<string, { first: DeliveryItem; latest: DeliveryItem; answered: boolean }>();
  // Listed newest first: walked backwards, events come oldest first and an event's last attempt seen is its latest.
  for (const item of [...items].reverse()) {
    const answered = item.status_code >= 200 && item.status_code < 300;
    const known = events.get(item.guid);
    if (known) {
      known.latest = item;
      known.answered ||= answered;
    } else events.set(item.guid, { first: item, latest: item, answered });
  }
  return events;
}

/** The next redelivery of this event that is ours to ask (1..REDELIVERIES), or null when all were asked. */
async function claimTurn(deliveries: Store, guid: string, at: number): Promise<number | null> {
  for (let turn = 1; turn <= REDELIVERIES; turn++) if (await deliveries.claimAttempt(`redeliver:${guid}`, turn, new Date(at))) return turn;
  return null;
}

/** The App's deliveries made since `since`, newest first, page by page until an older one. */
async function deliveriesSince(client: AppClient, since: number): Promise<DeliveryItem[]> {
  const found: DeliveryItem[] = [];
  let cursor: string | null = null;
  for (;;) {
    const page = await client.request('GET /app/hook/deliveries', { per_page: 100, ...(cursor ? { cursor } : {}) });
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
