import type { RepoRef } from '../domain/repo.js';
import type { InsertOutcome } from './stores.js';
import type { WebhookEventType } from './webhook-outbox.js';

/**
 * Storage of outgoing webhooks: subscriptions, the durable outbox of
 * deliveries, and the attempt claims that keep one delivery in flight at a time.
 * Records are plain values; the MongoDB adapter implements it.
 */

/** A signing secret as stored: sealed (encrypted), never in clear. */
export interface StoredSigningSecret {
  sealed: string;
  createdAt: Date;
  /** null: the current secret. Otherwise it still signs until then (rotation grace). */
  expiresAt: Date | null;
}

/** An organization's registered endpoint. */
export interface WebhookSubscriptionRecord {
  id: string;
  org: { host: string; owner: string };
  /** null: every repository of the organization. */
  repo: RepoRef | null;
  url: string;
  /** null: every event type, including ones added later. */
  eventTypes: WebhookEventType[] | null;
  description: string | null;
  secrets: StoredSigningSecret[];
  /** Set when disabled (by its owner or for failing); null while enabled. */
  disabledReason: string | null;
  disabledAt: Date | null;
  /** Start of the current unbroken run of failed attempts; null after a success. */
  failingSince: Date | null;
  consecutiveFailures: number;
  createdAt: Date;
  updatedAt: Date;
}

export type WebhookSubscriptionChange = Partial<
  Pick<
    WebhookSubscriptionRecord,
    'url' | 'eventTypes' | 'description' | 'secrets' | 'disabledReason' | 'disabledAt' | 'failingSince' | 'consecutiveFailures'
  >
> & { updatedAt: Date };

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'dead'] as const;
/**
 * pending: not attempted yet (or redelivery asked); failed: the last attempt
 * failed and another is scheduled; delivered: a 2xx answer; dead: retries exhausted.
 */
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** One event for one subscription: the outbox row. */
export interface WebhookDeliveryRecord {
  id: string;
  eventId: string;
  subscriptionId: string;
  eventType: WebhookEventType;
  /** Events of one PR for one subscription are delivered in `sequence` order. */
  orderingKey: string;
  sequence: number;
  /** The exact JSON body that is signed and sent. */
  body: string;
  status: WebhookDeliveryStatus;
  /** Attempts made, all time (redeliveries included). */
  attempts: number;
  /** `attempts` when the current retry schedule began (0, or at a redelivery). */
  scheduleStart: number;
  /** null once delivered or dead. */
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  lastResponseCode: number | null;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

export type WebhookDeliveryChange = Partial<
  Pick<WebhookDeliveryRecord, 'status' | 'attempts' | 'scheduleStart' | 'nextAttemptAt' | 'lastAttemptAt' | 'lastResponseCode' | 'lastError' | 'deliveredAt'>
>;

/** A worker's lease on one attempt of one delivery. */
export interface WebhookDeliveryClaim {
  deliveryId: string;
  attempt: number;
  /** 0 for the first claim of an attempt; +1 each time an expired claim is taken over. */
  takeover: number;
  owner: string;
  expiresAt: Date;
}

export interface WebhookStore {
  insertSubscription(subscription: WebhookSubscriptionRecord): Promise<void>;
  findSubscription(id: string): Promise<WebhookSubscriptionRecord | null>;
  /** An organization's subscriptions, oldest first. */
  listSubscriptions(host: string, owner: string): Promise<WebhookSubscriptionRecord[]>;
  /** Enabled subscriptions of one organization, or of all when none is named. */
  listEnabledSubscriptions(org?: { host: string; owner: string }): Promise<WebhookSubscriptionRecord[]>;
  countSubscriptions(host: string, owner: string): Promise<number>;
  updateSubscription(id: string, change: WebhookSubscriptionChange): Promise<WebhookSubscriptionRecord | null>;
  /** Deletes the subscription with its deliveries and claims. */
  deleteSubscription(id: string): Promise<void>;
  /** One more failed attempt in the current run of failures; returns the subscription after it. */
  recordFailure(id: string, at: Date): Promise<WebhookSubscriptionRecord | null>;
  /** A success ends the run of failures. */
  recordSuccess(id: string): Promise<void>;

  /** Duplicate when this (event id, subscription id) is already in the outbox. */
  insertDelivery(delivery: WebhookDeliveryRecord): Promise<InsertOutcome<WebhookDeliveryRecord>>;
  findDelivery(id: string): Promise<WebhookDeliveryRecord | null>;
  /** Pending or failed deliveries of these subscriptions due by `now`, earliest first. */
  listDue(subscriptionIds: string[], now: Date, limit: number): Promise<WebhookDeliveryRecord[]>;
  /** The open (pending or failed) delivery with the lowest sequence in this ordering chain. */
  chainHead(subscriptionId: string, orderingKey: string): Promise<WebhookDeliveryRecord | null>;
  /** Sets open deliveries' next attempt to `at` (later: they wait behind their chain's head; sooner: it just finished). */
  rescheduleDeliveries(ids: string[], at: Date): Promise<void>;
  updateDelivery(id: string, change: WebhookDeliveryChange): Promise<WebhookDeliveryRecord | null>;
  /** A subscription's deliveries, newest first, after the cursor position. */
  pageDeliveries(subscriptionId: string, take: number, after?: { createdAt: Date; id: string }): Promise<WebhookDeliveryRecord[]>;

  /**
   * Claims one attempt of a delivery until `now + leaseMs`, by inserting under
   * the unique key (delivery, attempt, takeover): atomic on MongoDB and FerretDB.
   * A live claim of someone else means null; an expired one is taken over.
   */
  claimAttempt(deliveryId: string, attempt: number, owner: string, now: Date, leaseMs: number): Promise<WebhookDeliveryClaim | null>;
  /** The newest claim of that attempt (who holds it now). */
  latestClaim(deliveryId: string, attempt: number): Promise<WebhookDeliveryClaim | null>;
  /** Drops one claim (its holder found nothing to do). */
  releaseClaim(claim: WebhookDeliveryClaim): Promise<void>;
  /** Drops the claims of attempts up to this one, once its result is recorded. */
  releaseClaims(deliveryId: string, throughAttempt: number): Promise<void>;
  /**
   * Forgets up to `limit` deliveries that ended (delivered or dead) before `before`, with their claims; returns how
   * many. Each event's row holds its whole body: without this the outbox grows for as long as the service runs.
   */
  pruneFinished(before: Date, limit: number): Promise<number>;
  /** Forgets up to `limit` open deliveries recorded before `before` for disabled endpoints (held for them), with their claims. */
  pruneHeld(before: Date, limit: number): Promise<number>;
}
