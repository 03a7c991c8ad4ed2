import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ServiceMetrics } from '../observability/service-metrics.js';
import type { WebhookDeliveryChange, WebhookDeliveryRecord, WebhookStore, WebhookSubscriptionRecord } from '../ports/webhook-store.js';
import { DEFAULT_DISABLE_POLICY, disableReason } from './endpoint-health.js';
import { MAX_ERROR_LENGTH, postDelivery, type AttemptResult } from './post-delivery.js';
import { DEFAULT_JITTER, DEFAULT_RETRY_SCHEDULE_MS, retryDelay } from './retry-schedule.js';
import type { SecretBox } from './secret-box.js';
import { signDelivery } from './signing.js';
import { openLiveSecrets } from './signing-secrets.js';
import { checkWebhookUrl, type AddressLookup } from './url-safety.js';

/** Deliveries of one chain a lane sends one after another in a round, after its first. */
const CHAIN_RUN_PER_ROUND = 20;

/**
 * A delivery the service could not attempt (DNS failing, a secret it cannot open) is tried again after a tenth of its age,
 * between a minute and half an hour; past a day of it, the trouble is taken for the endpoint's (a name whose own servers
 * fail looks the same) and the attempt counts as failed (found by review: deferred for ever, never dead or disabled).
 */
const DEFERRED_MIN_MS = 60_000;
const DEFERRED_MAX_MS = 30 * 60_000;
const DEFERRED_FOR_AT_MOST_MS = 24 * 60 * 60_000;

/** What the worker logs through: pino fits. Entries carry delivery and event ids, never a secret or a body. */
export interface WebhookWorkerLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export type { AttemptResult } from './post-delivery.js';

/** Test seams around the HTTP call: where a crash can fall. */
export interface DeliveryHooks {
  /** After the claim and signing, before the request leaves. */
  beforeSend?(delivery: WebhookDeliveryRecord): Promise<void>;
  /** After the receiver answered, before the answer is recorded. */
  afterResponse?(delivery: WebhookDeliveryRecord, status: number): Promise<void>;
}

export interface WebhookDeliveryWorkerOptions {
  store: WebhookStore;
  secrets: SecretBox;
  log: WebhookWorkerLog;
  /** MQ_WEBHOOK_ALLOW_PRIVATE: when false every attempt re-checks that the URL resolves to public addresses only. */
  allowPrivate: boolean;
  metrics?: Pick<ServiceMetrics, 'webhookDeliveries'>;
  /** Milliseconds since the epoch. */
  now?: () => number;
  /** In [0, 1), for the retry jitter. */
  random?: () => number;
  /** Idle wait between looks for due deliveries (MQ_WEBHOOK_POLL_MS). Default 1000. */
  pollMs?: number;
  /** Per-call timeout (MQ_WEBHOOK_TIMEOUT_MS). Default 10 000. */
  timeoutMs?: number;
  /** How long an attempt's claim holds before another worker may take it over. Default max(60 s, 3 × timeout). */
  leaseMs?: number;
  /** Waits before each retry; the attempt after the last one is final. Default DEFAULT_RETRY_SCHEDULE_MS (about 47 h). */
  retrySchedule?: readonly number[];
  jitter?: number;
  /** Attempts in flight at once. Default 4. */
  concurrency?: number;
  /** Due deliveries looked at per round. Default 50. */
  batchSize?: number;
  /** An endpoint is disabled after failing without a success for this long… Default 24 h. */
  disableAfterMs?: number;
  /** …and at least this many attempts in a row (or when a delivery goes dead). Default 10. */
  disableAfterFailures?: number;
  /** This worker's name in claims. */
  owner?: string;
  userAgent?: string;
  lookup?: AddressLookup;
  hooks?: DeliveryHooks;
}

/** Looks at the due deliveries per round: after the first, organizations at their share are left out. */
const FAIR_LOOKS = 4;

/**
 * Delivers the outbox: claims due deliveries (one attempt in flight per
 * delivery, by an insert under a unique key), keeps order within each PR's
 * chain per endpoint, signs with every live secret, POSTs with a timeout and
 * no redirects, records the answer and schedules retries with backoff and
 * jitter. Delivery is at least once: a crash between the receiver's answer and
 * the record means one repeat, with the same webhook-id.
 */
export class WebhookDeliveryWorker {
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly pollMs: number;
  private readonly timeoutMs: number;
  private readonly leaseMs: number;
  private readonly schedule: readonly number[];
  private readonly owner: string;
  private readonly userAgent: string;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  /** Set by stop() until the next start(): a lane sends no further event of its chain. */
  private stopping = false;
  /** Bumped by each start; attempts of an abandoned epoch never record (as if that process died). */
  private epoch = 0;
  private abandonedThrough = -1;
  private wakeRequested = false;
  private round: Promise<number> | null = null;
  private readonly inFlight = new Set<AbortController>();

  constructor(private readonly options: WebhookDeliveryWorkerOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.pollMs = options.pollMs ?? 1_000;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.leaseMs = options.leaseMs ?? Math.max(60_000, 3 * this.timeoutMs);
    this.schedule = options.retrySchedule ?? DEFAULT_RETRY_SCHEDULE_MS;
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.userAgent = options.userAgent ?? 'merge-queue-webhooks/1.0';
  }

  /** Polls for due deliveries until stopped. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.epoch += 1;
    this.round = null;
    this.scheduleTick(0);
  }

  /** Something became due now (a publish, a redelivery): look without waiting for the poll. */
  nudge(): void {
    if (!this.running) return;
    // Read by the round in progress (or the tick about to reschedule) so the wake-up is not lost.
    this.wakeRequested = true;
    if (!this.round) this.scheduleTick(0);
  }

  /**
   * Stops polling and waits up to `graceMs` (default: the call timeout plus a
   * second) for attempts in flight. Attempts still running then are abandoned
   * like a crash would: aborted and never recorded; their claims expire and
   * another worker repeats them with the same webhook-id.
   */
  async stop(options: { graceMs?: number } = {}): Promise<void> {
    this.running = false;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const current = this.round;
    if (!current) return;
    const graceMs = options.graceMs ?? this.timeoutMs + 1_000;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      current.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (!finished) {
      this.abandonedThrough = this.epoch;
      for (const controller of this.inFlight) controller.abort();
    }
  }

  /** One round: every due chain head attempted once. Returns the attempts made (tests drive this directly). */
  runOnce(): Promise<number> {
    this.round ??= this.deliverDue().finally(() => {
      this.round = null;
    });
    return this.round;
  }

  private scheduleTick(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = null;
    this.wakeRequested = false;
    let attempted = 0;
    try {
      attempted = await this.runOnce();
    } catch (error) {
      this.options.log.error({ err: error }, 'webhook delivery round failed');
    }
    if (!this.running) return;
    const again = attempted > 0 || this.wakeRequested;
    this.scheduleTick(again ? 0 : this.pollMs);
  }

  private async deliverDue(): Promise<number> {
    const { store } = this.options;
    const now = new Date(this.now());
    const subscriptions = new Map((await store.listEnabledSubscriptions()).map((s) => [s.id, s]));
    if (subscriptions.size === 0) return 0;
    const heads = await this.fairHeads(subscriptions, now);
    const roundStarted = this.now();
    let attempted = 0;
    const epoch = this.epoch;
    await eachLimited(heads, this.options.concurrency ?? 4, async (head) => {
      const subscription = subscriptions.get(head.subscriptionId);
      if (!subscription) return;
      // A delivered event's successor in its chain goes next in the same lane, while it is due (found by review: a
      // chain sent one event a round, so a PR's backlog of 6 events after an outage took 6 rounds, each as long as its
      // slowest attempt).
      let next: WebhookDeliveryRecord | null = head;
      for (let sent = 0; next && sent <= CHAIN_RUN_PER_ROUND; sent++) {
        // Stopping: the attempt in flight finishes, no next one starts. Nor once the round has run a time-out's length:
        // a round waits for its slowest lane, and the others' deliveries wait for the next round (found by review).
        if (this.abandonedThrough >= epoch || (sent > 0 && (this.stopping || this.now() - roundStarted >= this.timeoutMs))) return;
        const delivery: WebhookDeliveryRecord = next;
        next = null;
        try {
          const result = await this.attempt(delivery, subscription, epoch);
          if (result !== null) attempted += 1;
          if (result !== 'delivered') break;
          const successor = await store.chainHead(delivery.subscriptionId, delivery.orderingKey);
          if (successor && (successor.nextAttemptAt === null || successor.nextAttemptAt <= new Date(this.now()))) next = successor;
        } catch (error) {
          // The store failed mid-attempt: the claim expires and a later round repeats the attempt.
          this.options.log.error({ err: error, deliveryId: delivery.id, eventId: delivery.eventId, subscriptionId: delivery.subscriptionId }, 'webhook attempt failed');
          break;
        }
      }
    });
    return attempted;
  }

  /**
   * The chain heads to attempt this round, at most a fair share of them per organization while several have
   * deliveries due. A round waits for its slowest attempt, and an endpoint that never answers costs the whole
   * timeout: without shares, one organization's silent endpoints (many PRs, many chains) filled every round and held
   * every other organization's deliveries for minutes. With at most half the lanes per organization, such a round
   * lasts about one timeout, and an organization at its share is left out of the next look at the due deliveries,
   * so the others' are seen. One organization alone (a self-hosted queue's usual case) takes the whole round.
   */
  private async fairHeads(subscriptions: Map<string, WebhookSubscriptionRecord>, now: Date): Promise<WebhookDeliveryRecord[]> {
    const { store } = this.options;
    const batchSize = this.options.batchSize ?? 50;
    const share = Math.max(1, Math.floor((this.options.concurrency ?? 4) / 2));
    const orgOf = (subscriptionId: string) => {
      const org = subscriptions.get(subscriptionId)?.org;
      return org ? `${org.host}/${org.owner}` : subscriptionId;
    };
    const taken = new Map<string, number>();
    const orgsDue = new Set<string>();
    const seenChains = new Set<string>();
    const passedOver: WebhookDeliveryRecord[][] = [];
    const heads: WebhookDeliveryRecord[] = [];
    // Only the head of a chain (its lowest open sequence) may go: order per PR per endpoint.
    const takeHead = async (members: WebhookDeliveryRecord[]) => {
      const first = members[0] as WebhookDeliveryRecord;
      const head = await store.chainHead(first.subscriptionId, first.orderingKey);
      if (!head) return;
      if (head.nextAttemptAt && head.nextAttemptAt > now) {
        // The head waits for its retry; the rest of the chain cannot go before it.
        await store.rescheduleDeliveries(
          members.filter((m) => m.id !== head.id).map((m) => m.id),
          head.nextAttemptAt,
        );
        return;
      }
      heads.push(head);
      const org = orgOf(head.subscriptionId);
      taken.set(org, (taken.get(org) ?? 0) + 1);
    };
    let looking = [...subscriptions.keys()];
    for (let look = 0; look < FAIR_LOOKS && looking.length > 0; look++) {
      const due = await store.listDue(looking, now, batchSize);
      const chains = new Map<string, WebhookDeliveryRecord[]>();
      for (const delivery of due) {
        const key = `${delivery.subscriptionId}\n${delivery.orderingKey}`;
        orgsDue.add(orgOf(delivery.subscriptionId));
        if (!seenChains.has(key)) chains.set(key, [...(chains.get(key) ?? []), delivery]);
      }
      for (const [key, members] of chains) {
        seenChains.add(key);
        if ((taken.get(orgOf((members[0] as WebhookDeliveryRecord).subscriptionId)) ?? 0) >= share) passedOver.push(members);
        else await takeHead(members);
      }
      const full = new Set([...taken].filter(([, n]) => n >= share).map(([org]) => org));
      if (due.length < batchSize || full.size === 0) break;
      looking = looking.filter((id) => !full.has(orgOf(id)));
    }
    if (orgsDue.size <= 1) for (const members of passedOver) await takeHead(members);
    return heads;
  }

  /** Claims, sends and records one attempt; false when someone else has it or it is no longer due. */
  /** Claims, sends and records one attempt: null when someone else has it or it is no longer due, else its result's kind. */
  private async attempt(delivery: WebhookDeliveryRecord, subscription: WebhookSubscriptionRecord, epoch: number): Promise<AttemptResult['kind'] | null> {
    const { store, log } = this.options;
    const attemptNo = delivery.attempts + 1;
    const claimedAt = new Date(this.now());
    const claim = await store.claimAttempt(delivery.id, attemptNo, this.owner, claimedAt, this.leaseMs);
    if (!claim) return null;
    // Read again under the claim: another worker may have finished this attempt meanwhile.
    const fresh = await store.findDelivery(delivery.id);
    if (!fresh || fresh.attempts !== delivery.attempts || (fresh.status !== 'pending' && fresh.status !== 'failed') || (fresh.nextAttemptAt !== null && fresh.nextAttemptAt > claimedAt)) {
      await store.releaseClaim(claim);
      return null;
    }
    const context = { deliveryId: fresh.id, eventId: fresh.eventId, subscriptionId: subscription.id, attempt: attemptNo };
    const controller = new AbortController();
    this.inFlight.add(controller);
    try {
      const result = await this.send(fresh, subscription, controller.signal, context);
      // A crashed (abandoned) worker records nothing: its claim expires and the attempt is repeated.
      if (this.abandonedThrough >= epoch) return 'failed';
      const holder = await store.latestClaim(fresh.id, attemptNo);
      if (!holder || holder.takeover !== claim.takeover || holder.owner !== this.owner) {
        log.warn({ ...context, result: result.kind }, 'webhook attempt outlived its claim; another worker owns it, result not recorded');
        return 'failed';
      }
      await this.record(fresh, subscription, attemptNo, result, context);
      return result.kind;
    } finally {
      this.inFlight.delete(controller);
    }
  }

  private async send(
    delivery: WebhookDeliveryRecord,
    subscription: WebhookSubscriptionRecord,
    abort: AbortSignal,
    context: object,
  ): Promise<AttemptResult> {
    const { log } = this.options;
    // Again at every attempt: DNS may now point somewhere private (rebinding); the delivery connects to what was checked.
    const checked = await checkWebhookUrl(subscription.url, {
      allowPrivate: this.options.allowPrivate,
      lookup: this.options.lookup,
      lookupTimeoutMs: Math.min(this.timeoutMs, 5_000),
    });
    // The resolver failing just now is the service's trouble, not the endpoint's (found by review: it counted towards
    // disabling the endpoint).
    if (!checked.ok) return checked.transient ? { kind: 'deferred', error: checked.reason } : { kind: 'refused', error: checked.reason };
    const at = new Date(this.now());
    const { secrets, unreadable } = openLiveSecrets(subscription, this.options.secrets, at);
    if (unreadable > 0) log.warn({ ...context, unreadable }, 'webhook signing secret cannot be decrypted with this key (was MQ_WEBHOOK_SECRET_KEY changed?)');
    if (secrets.length === 0) {
      // A key that differs (a replica with a key file of its own, MQ_WEBHOOK_SECRET_KEY changed): the operator's to mend,
      // or the owner's (rotateWebhookSecret seals a new one); the endpoint is not failing, and is not disabled for it.
      log.error({ ...context }, 'webhook signing secret cannot be decrypted with this key: the delivery waits (set the MQ_WEBHOOK_SECRET_KEY that sealed it, or rotate the secret)');
      return { kind: 'deferred', error: 'The signing secret cannot be decrypted with the service key (was MQ_WEBHOOK_SECRET_KEY changed?); rotate the secret.' };
    }
    const headers = signDelivery({ messageId: delivery.eventId, at, body: delivery.body, secrets });
    await this.options.hooks?.beforeSend?.(delivery);
    const afterResponse = this.options.hooks?.afterResponse;
    return postDelivery({
      url: checked.url,
      headers,
      body: delivery.body,
      userAgent: this.userAgent,
      timeoutMs: this.timeoutMs,
      abort,
      // To the addresses just checked, not to what DNS answers when connecting (rebinding).
      ...(checked.addresses ? { addresses: checked.addresses } : {}),
      ...(afterResponse ? { afterResponse: (status: number) => afterResponse(delivery, status) } : {}),
    });
  }

  private async record(
    delivery: WebhookDeliveryRecord,
    subscription: WebhookSubscriptionRecord,
    attemptNo: number,
    result: AttemptResult,
    context: object,
  ): Promise<void> {
    const { store, log } = this.options;
    const at = new Date(this.now());
    let final: boolean;
    const age = at.getTime() - delivery.createdAt.getTime();
    if (result.kind === 'deferred' && age >= DEFERRED_FOR_AT_MOST_MS) result = { kind: 'refused', error: result.error };
    if (result.kind === 'deferred') {
      // Tried again later as the same attempt: no attempt spent, no failure counted against the endpoint.
      final = false;
      const wait = Math.min(DEFERRED_MAX_MS, Math.max(DEFERRED_MIN_MS, Math.round(age / 10)));
      await store.updateDelivery(delivery.id, { nextAttemptAt: new Date(at.getTime() + wait), lastError: result.error.slice(0, MAX_ERROR_LENGTH) });
      log.warn({ ...context, error: result.error }, 'webhook delivery not attempted (the service could not): tried again later');
    } else if (result.kind === 'delivered') {
      final = true;
      await store.updateDelivery(delivery.id, {
        status: 'delivered',
        attempts: attemptNo,
        nextAttemptAt: null,
        lastAttemptAt: at,
        lastResponseCode: result.status,
        lastError: null,
        deliveredAt: at,
      });
      // Always: the round's copy of the endpoint may predate a failure another lane recorded in this round (found by
      // review: the run of failures then kept its older start, and a later blip could disable the endpoint early).
      await store.recordSuccess(subscription.id);
      log.info({ ...context, status: result.status }, 'webhook delivered');
    } else {
      const delay = retryDelay(attemptNo - delivery.scheduleStart, this.schedule, this.random, this.options.jitter ?? DEFAULT_JITTER);
      final = delay === null;
      const change: WebhookDeliveryChange = {
        status: final ? 'dead' : 'failed',
        attempts: attemptNo,
        nextAttemptAt: delay === null ? null : new Date(at.getTime() + delay),
        lastAttemptAt: at,
        lastResponseCode: result.kind === 'failed' ? result.status : null,
        lastError: result.error.slice(0, MAX_ERROR_LENGTH),
      };
      await store.updateDelivery(delivery.id, change);
      log.warn(
        { ...context, result: result.kind, status: change.lastResponseCode, error: change.lastError, nextAttemptAt: change.nextAttemptAt?.toISOString() ?? null },
        final ? 'webhook delivery failed for the last time: dead' : 'webhook delivery failed; will retry',
      );
      const after = await store.recordFailure(subscription.id, at);
      if (after) await this.disableIfFailingTooLong(after, at, final, change.lastError ?? '');
    }
    this.options.metrics?.webhookDeliveries.inc({ result: result.kind });
    await store.releaseClaims(delivery.id, attemptNo);
    if (final) await this.wakeNext(delivery, at);
  }

  /** Failing continuously (see disableReason): stop sending until its owner re-enables it. */
  private async disableIfFailingTooLong(subscription: WebhookSubscriptionRecord, at: Date, wentDead: boolean, error: string): Promise<void> {
    const reason = disableReason(subscription, at, { wentDead, error }, {
      disableAfterMs: this.options.disableAfterMs ?? DEFAULT_DISABLE_POLICY.disableAfterMs,
      disableAfterFailures: this.options.disableAfterFailures ?? DEFAULT_DISABLE_POLICY.disableAfterFailures,
    });
    if (reason === null) return;
    await this.options.store.updateSubscription(subscription.id, { disabledReason: reason, disabledAt: at, updatedAt: at });
    this.options.metrics?.webhookDeliveries.inc({ result: 'disabled' });
    this.options.log.warn(
      { subscriptionId: subscription.id, consecutiveFailures: subscription.consecutiveFailures, failingSince: subscription.failingSince?.toISOString() ?? null },
      'webhook endpoint disabled: failing continuously',
    );
  }

  /** The next delivery of the chain may go now (it may have been deferred behind this one). */
  private async wakeNext(delivery: WebhookDeliveryRecord, at: Date): Promise<void> {
    const next = await this.options.store.chainHead(delivery.subscriptionId, delivery.orderingKey);
    if (next && next.status === 'pending' && next.nextAttemptAt !== null && next.nextAttemptAt > at) {
      await this.options.store.rescheduleDeliveries([next.id], at);
    }
  }
}

async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  });
  await Promise.all(lanes);
}
