/**
 * GitHub webhook deliveries, recorded before they are answered and handled
 * afterwards: GitHub redelivers with the same id (applied once), and never
 * redelivers on its own, so what was answered must not be lost.
 */
export interface ReceivedDelivery {
  id: string;
  /** The X-GitHub-Event name. */
  name: string;
  /** The exact body GitHub sent (as the store keeps it: one over 15 MiB gzipped, see github/recorded-body.ts). */
  payloadJson: string;
  receivedAt: Date;
  /** Handling attempts started so far. */
  attempts: number;
  /** When the last attempt started. */
  lastAttemptAt: Date | null;
  /** When an attempt last failed: the last attempt has ended when this is not before its start. */
  lastFailedAt: Date | null;
  /** When the attempt running last said it still runs (DeliveryHandler's heartbeat). */
  aliveAt: Date | null;
}

/** What tells a delivery's last attempt ended from one still running (or whose replica died). */
type AttemptTimes = Pick<ReceivedDelivery, 'lastAttemptAt' | 'lastFailedAt' | 'aliveAt'>;

/** Whether the last attempt has ended: it failed after it started (a handled delivery is not unhandled at all). */
export function lastAttemptEnded(delivery: AttemptTimes): boolean {
  return delivery.lastFailedAt !== null && delivery.lastFailedAt.getTime() >= (delivery.lastAttemptAt?.getTime() ?? 0);
}

/** When an attempt not ended last showed it runs: its start, or its heartbeat (DeliveryHandler). */
export function lastSignOfLife(delivery: AttemptTimes): number {
  return Math.max(delivery.lastAttemptAt?.getTime() ?? 0, delivery.aliveAt?.getTime() ?? 0);
}

export interface DeliveryStore {
  /**
   * Records a delivery until it is handled, its first handling attempt counted (the replica that receives it
   * handles it at once: `claimAttempt(id, 1)`); false when this id was received before (atomic: a unique key).
   */
  record(delivery: { id: string; name: string; payloadJson: string; receivedAt: Date }): Promise<boolean>;
  /**
   * A delivery received again (GitHub's "Redeliver" sends the same id) that was given up: never handled, its
   * `maxAttempts` attempts used. Recorded anew, as `record` would (this body kept, its attempts start over with
   * the first counted, earlier attempts' claims released); false when it is handled, still being retried or
   * unknown (a duplicate). Of replicas receiving it at once, one re-arms it (a unique key decides).
   */
  rearm(delivery: { id: string; name: string; payloadJson: string; receivedAt: Date }, maxAttempts: number): Promise<boolean>;
  /** Claims attempt `attempt` of a delivery under a unique key, so one replica makes each. False when another did. */
  claimAttempt(id: string, attempt: number, at: Date): Promise<boolean>;
  /**
   * Starts a later handling attempt (a retry): counts it and claims it (`claimAttempt`). False when another
   * replica claimed it.
   */
  startAttempt(id: string, at: Date): Promise<boolean>;
  /** Handled: the payload is dropped, the id kept (redeliveries are recognised). */
  handled(id: string, at: Date): Promise<void>;
  /** The attempt failed (at `at`); a later sweep tries again. */
  failed(id: string, error: string, at: Date): Promise<void>;
  /** The attempt running still runs: no sweep starts another beside it. */
  stillHandling(id: string, at: Date): Promise<void>;
  /** Deliveries not handled yet, received before `before`, with fewer than `maxAttempts` attempts. */
  unhandled(before: Date, maxAttempts: number, limit: number): Promise<ReceivedDelivery[]>;
  /** Which of these delivery ids were received (recorded, handled or not, and not forgotten or pruned). */
  received(ids: string[]): Promise<Set<string>>;
  /** How far the sweep asking GitHub for failed deliveries got (github/redelivery.ts); null before its first. */
  redeliverySweptTo(): Promise<Date | null>;
  setRedeliverySweptTo(at: Date): Promise<void>;
  /** Forgets a delivery that could not be handled before answering, so GitHub's redelivery is applied. */
  forget(id: string): Promise<void>;
  /** Drops deliveries older than `before` (no TTL indexes on FerretDB). */
  prune(before: Date): Promise<void>;
}
