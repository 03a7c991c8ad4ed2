import { lastAttemptEnded, lastSignOfLife, type DeliveryStore, type ReceivedDelivery } from '../ports/delivery-store.js';
import type { WebhookReceiver } from './webhook-route.js';
import { bodyOf } from './recorded-body.js';

/** The little of a logger the handler needs (pino fits). */
interface DeliveryLog {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** Attempts before a delivery is given up (left recorded, with its last error, for diagnosis; GitHub's "Redeliver" then handles it again). */
export const MAX_DELIVERY_ATTEMPTS = 5;

/**
 * An attempt still running says so this often. A handler may run for many minutes: the GitHub client waits out a
 * rate limit (up to its reset) and backs off from 5xx answers. Found by review: the sweep took an attempt running for
 * over a minute for a failed one and started the next beside it, so a reply was posted twice (both looked first, found
 * nothing, and posted) and a `/mq restart` was carried out twice.
 */
const HEARTBEAT_MS = 60_000;
/** An attempt that has not said it runs for this long is taken for one whose replica died: the sweep tries again. */
const SILENT_ATTEMPT_MS = 3 * HEARTBEAT_MS;

/**
 * Runs Probot's handlers for recorded deliveries after the route answered.
 * A failed attempt is tried again by the sweep (after a minute, doubling),
 * by whichever replica claims the next attempt first.
 */
export class DeliveryHandler {
  private readonly inFlight = new Set<Promise<boolean>>();

  constructor(
    private readonly options: {
      receiver: WebhookReceiver;
      deliveries: DeliveryStore;
      log: DeliveryLog;
      now?: () => Date;
      /** Wait before attempt n+1 (tests make it short). */
      retryAfterMs?: (attempts: number) => number;
      /** How often an attempt running says so, and how long one silent is taken for dead (tests make them short). */
      heartbeat?: { everyMs: number; deadAfterMs: number };
    },
  ) {}

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** Handles a delivery just recorded (its first attempt, counted by the record) in the background. */
  handleSoon(delivery: ReceivedDelivery): void {
    const work = this.handle(delivery, true).finally(() => this.inFlight.delete(work));
    this.inFlight.add(work);
  }

  /**
   * One attempt; true when the handlers succeeded (or another replica has this attempt). `received`: the
   * delivery was just recorded, with its first attempt counted; else this is a retry, counted now.
   */
  async handle(delivery: ReceivedDelivery, received = false): Promise<boolean> {
    const { deliveries, receiver, log } = this.options;
    try {
      const claimed = received ? await deliveries.claimAttempt(delivery.id, 1, delivery.receivedAt) : await deliveries.startAttempt(delivery.id, this.now());
      if (!claimed) return true;
      const heartbeat = setInterval(() => void deliveries.stillHandling(delivery.id, this.now()).catch(() => undefined), this.heartbeat().everyMs);
      heartbeat.unref();
      try {
        await receiver.receive({ id: delivery.id, name: delivery.name, payload: JSON.parse(await bodyOf(delivery.payloadJson)) as unknown });
      } finally {
        clearInterval(heartbeat);
      }
      await deliveries.handled(delivery.id, this.now());
      return true;
    } catch (error) {
      log.warn({ err: error, delivery: delivery.id, event: delivery.name }, 'webhook handling failed; it is tried again later');
      await deliveries.failed(delivery.id, error instanceof Error ? error.message : String(error), this.now()).catch(() => undefined);
      return false;
    }
  }

  private heartbeat(): { everyMs: number; deadAfterMs: number } {
    return this.options.heartbeat ?? { everyMs: HEARTBEAT_MS, deadAfterMs: SILENT_ATTEMPT_MS };
  }

  /** Tries again what failed or what a replica that died was handling; never beside an attempt still running. */
  async retryUnhandled(): Promise<number> {
    const { deliveries, log } = this.options;
    const now = this.now();
    const retryAfter = this.options.retryAfterMs ?? ((attempts: number) => 60_000 * 2 ** Math.max(0, attempts - 1));
    let retried = 0;
    // Received over a minute ago: the receiving replica has had its chance.
    for (const delivery of await deliveries.unhandled(new Date(now.getTime() - retryAfter(0)), MAX_DELIVERY_ATTEMPTS, 100)) {
      const ended = lastAttemptEnded(delivery);
      if (ended && now.getTime() - (delivery.lastAttemptAt?.getTime() ?? 0) < retryAfter(delivery.attempts)) continue;
      // Not ended: running here or on another replica (it says so), or its replica died (silent).
      if (!ended && now.getTime() - lastSignOfLife(delivery) < this.heartbeat().deadAfterMs) continue;
      if (delivery.attempts + 1 >= MAX_DELIVERY_ATTEMPTS) log.error({ delivery: delivery.id, event: delivery.name }, 'last attempt at a webhook delivery');
      await this.handle(delivery);
      retried++;
    }
    return retried;
  }

  /** Waits for handlers in flight (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }
}
