import { KeyedMutex } from '../../concurrency/keyed-mutex.js';
import type { Connection } from 'mongoose';
import { orgKey } from '../../domain/repo.js';
import type { RepoRef } from '../../domain/repo.js';
import type { WebhookEventType } from '../../ports/webhook-outbox.js';
import type {
  StoredSigningSecret,
  WebhookDeliveryClaim,
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookStore,
  WebhookSubscriptionRecord,
} from '../../ports/webhook-store.js';
import { isDuplicateKeyError } from './errors.js';
import { webhookClaimModel, webhookOutboxModel } from './models/webhook-delivery.js';
import { webhookSubscriptionModel } from './models/webhook-subscription.js';

type SubscriptionDoc = {
  _id: string;
  host: string;
  owner: string;
  repo: RepoRef | null;
  url: string;
  eventTypes: WebhookEventType[] | null;
  description: string | null;
  secrets: StoredSigningSecret[];
  disabledReason: string | null;
  disabledAt: Date | null;
  failingSince: Date | null;
  consecutiveFailures: number;
  createdAt: Date;
  updatedAt: Date;
};

type DeliveryDoc = Omit<WebhookDeliveryRecord, 'id'> & { _id: string };
type ClaimDoc = WebhookDeliveryClaim & { _id: string };

const OPEN: WebhookDeliveryStatus[] = ['pending', 'failed'];

function toSubscription(doc: SubscriptionDoc): WebhookSubscriptionRecord {
  return {
    id: doc._id,
    org: { host: doc.host, owner: doc.owner },
    repo: doc.repo ? { host: doc.repo.host, owner: doc.repo.owner, name: doc.repo.name } : null,
    url: doc.url,
    eventTypes: Array.isArray(doc.eventTypes) ? [...doc.eventTypes] : null,
    description: doc.description ?? null,
    secrets: (doc.secrets ?? []).map((s) => ({ sealed: s.sealed, createdAt: s.createdAt, expiresAt: s.expiresAt ?? null })),
    disabledReason: doc.disabledReason ?? null,
    disabledAt: doc.disabledAt ?? null,
    failingSince: doc.failingSince ?? null,
    consecutiveFailures: doc.consecutiveFailures ?? 0,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

function toDelivery(doc: DeliveryDoc): WebhookDeliveryRecord {
  const { _id, ...rest } = doc;
  return {
    ...rest,
    id: _id,
    scheduleStart: rest.scheduleStart ?? 0,
    nextAttemptAt: rest.nextAttemptAt ?? null,
    lastAttemptAt: rest.lastAttemptAt ?? null,
    lastResponseCode: rest.lastResponseCode ?? null,
    lastError: rest.lastError ?? null,
    deliveredAt: rest.deliveredAt ?? null,
  };
}

function toClaim(doc: ClaimDoc): WebhookDeliveryClaim {
  return { deliveryId: doc.deliveryId, attempt: doc.attempt, takeover: doc.takeover, owner: doc.owner, expiresAt: doc.expiresAt };
}

/** Deliveries deleted per statement: a filter naming them stays far below MongoDB's 16 MiB. */
const DELETE_BATCH = 1_000;

export function mongoWebhookStore(connection: Connection): WebhookStore {
  const Subscriptions = webhookSubscriptionModel(connection);
  const Outbox = webhookOutboxModel(connection);
  const Claims = webhookClaimModel(connection);

  const findSubscription = async (id: string) => {
    const doc = await Subscriptions.findById(String(id)).lean<SubscriptionDoc>();
    return doc ? toSubscription(doc) : null;
  };
  const findDelivery = async (id: string) => {
    const doc = await Outbox.findById(String(id)).lean<DeliveryDoc>();
    return doc ? toDelivery(doc) : null;
  };
  const latestClaim = async (deliveryId: string, attempt: number) => {
    const doc = await Claims.findOne({ deliveryId: String(deliveryId), attempt: Number(attempt) })
      .sort({ takeover: -1 })
      .lean<ClaimDoc>();
    return doc ? toClaim(doc) : null;
  };

  /**
   * Changes to one subscription, one at a time in this process: its owner changes it (a rotated secret, a new URL,
   * disabled) while the delivery worker counts its failures, and the local FerretDB applies an update by reading the
   * document and writing it back whole, so two at once could lose one (a rotated secret among them).
   */
  const subscriptionChanges = new KeyedMutex();

  /** Deletes these deliveries with their claims; returns how many. */
  const forget = async (ids: string[]): Promise<number> => {
    if (ids.length === 0) return 0;
    await Claims.deleteMany({ deliveryId: { $in: ids } });
    await Outbox.deleteMany({ _id: { $in: ids } });
    return ids.length;
  };

  return {
    async insertSubscription(s) {
      await Subscriptions.create({
        _id: s.id,
        host: s.org.host,
        owner: s.org.owner,
        orgKey: orgKey(s.org.host, s.org.owner),
        repo: s.repo,
        url: s.url,
        eventTypes: s.eventTypes,
        description: s.description,
        secrets: s.secrets,
        disabledReason: s.disabledReason,
        disabledAt: s.disabledAt,
        failingSince: s.failingSince,
        consecutiveFailures: s.consecutiveFailures,
        createdAt: s.createdAt,
        updatedAt: s.updatedAt,
      });
    },
    findSubscription,
    async listSubscriptions(host, owner) {
      const docs = await Subscriptions.find({ orgKey: orgKey(String(host), String(owner)) })
        .sort({ createdAt: 1, _id: 1 })
        .lean<SubscriptionDoc[]>();
      return docs.map(toSubscription);
    },
    async listEnabledSubscriptions(org) {
      const filter = org ? { disabledReason: null, orgKey: orgKey(String(org.host), String(org.owner)) } : { disabledReason: null };
      const docs = await Subscriptions.find(filter).sort({ createdAt: 1, _id: 1 }).lean<SubscriptionDoc[]>();
      return docs.map(toSubscription);
    },
    async countSubscriptions(host, owner) {
      return Subscriptions.countDocuments({ orgKey: orgKey(String(host), String(owner)) });
    },
    async updateSubscription(id, change) {
      const result = await subscriptionChanges.run(String(id), () => Subscriptions.updateOne({ _id: String(id) }, { $set: change }));
      return result.matchedCount === 0 ? null : findSubscription(id);
    },
    async deleteSubscription(id) {
      await Subscriptions.deleteOne({ _id: String(id) });
      // In bounded batches: one filter naming every delivery of a long-lived endpoint would pass MongoDB's 16 MiB.
      for (;;) {
        const batch = (await Outbox.find({ subscriptionId: String(id) }, { _id: 1 }).limit(DELETE_BATCH).lean<{ _id: string }[]>()).map((d) => d._id);
        if (batch.length === 0) return;
        await Claims.deleteMany({ deliveryId: { $in: batch } });
        await Outbox.deleteMany({ _id: { $in: batch } });
      }
    },
    async recordFailure(id, at) {
      await subscriptionChanges.run(String(id), async () => {
        // Two steps: `failingSince` is set only by the first failure of a run.
        await Subscriptions.updateOne({ _id: String(id), failingSince: null }, { $set: { failingSince: at } });
        await Subscriptions.updateOne({ _id: String(id) }, { $inc: { consecutiveFailures: 1 } });
      });
      return findSubscription(id);
    },
    async recordSuccess(id) {
      // Written only when there is a run of failures to end (most successes change nothing).
      await subscriptionChanges.run(String(id), () =>
        Subscriptions.updateOne({ _id: String(id), $or: [{ failingSince: { $ne: null } }, { consecutiveFailures: { $ne: 0 } }] }, { $set: { failingSince: null, consecutiveFailures: 0 } }),
      );
    },

    async insertDelivery(delivery) {
      const { id, ...rest } = delivery;
      try {
        await Outbox.create({ _id: id, ...rest });
        return { ok: true, value: delivery };
      } catch (error) {
        if (isDuplicateKeyError(error)) return { ok: false, reason: 'duplicate' };
        throw error;
      }
    },
    findDelivery,
    async listDue(subscriptionIds, now, limit) {
      if (subscriptionIds.length === 0) return [];
      const docs = await Outbox.find({
        status: { $in: OPEN },
        subscriptionId: { $in: subscriptionIds.map(String) },
        nextAttemptAt: { $lte: now },
      })
        .sort({ nextAttemptAt: 1, sequence: 1 })
        .limit(limit)
        .lean<DeliveryDoc[]>();
      return docs.map(toDelivery);
    },
    async chainHead(subscriptionId, orderingKey) {
      const doc = await Outbox.findOne({ subscriptionId: String(subscriptionId), orderingKey: String(orderingKey), status: { $in: OPEN } })
        .sort({ sequence: 1, createdAt: 1 })
        .lean<DeliveryDoc>();
      return doc ? toDelivery(doc) : null;
    },
    async rescheduleDeliveries(ids, at) {
      if (ids.length === 0) return;
      await Outbox.updateMany({ _id: { $in: ids.map(String) }, status: { $in: OPEN } }, { $set: { nextAttemptAt: at } });
    },
    async updateDelivery(id, change) {
      const result = await Outbox.updateOne({ _id: String(id) }, { $set: change });
      return result.matchedCount === 0 ? null : findDelivery(id);
    },
    async pageDeliveries(subscriptionId, take, after) {
      const base = { subscriptionId: String(subscriptionId) };
      const filter = after
        ? { ...base, $or: [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, _id: { $lt: String(after.id) } }] }
        : base;
      const docs = await Outbox.find(filter).sort({ createdAt: -1, _id: -1 }).limit(take).lean<DeliveryDoc[]>();
      return docs.map(toDelivery);
    },

    async claimAttempt(deliveryId, attempt, owner, now, leaseMs) {
      const current = await latestClaim(deliveryId, attempt);
      if (current && current.expiresAt.getTime() > now.getTime()) return null;
      const takeover = current ? current.takeover + 1 : 0;
      const claim: WebhookDeliveryClaim = { deliveryId, attempt, takeover, owner, expiresAt: new Date(now.getTime() + leaseMs) };
      try {
        await Claims.create({ _id: `${deliveryId}:${attempt}:${takeover}`, ...claim, claimedAt: now });
        return claim;
      } catch (error) {
        if (isDuplicateKeyError(error)) return null;
        throw error;
      }
    },
    latestClaim,
    async releaseClaim(claim) {
      await Claims.deleteOne({ _id: `${claim.deliveryId}:${claim.attempt}:${claim.takeover}` });
    },
    async releaseClaims(deliveryId, throughAttempt) {
      await Claims.deleteMany({ deliveryId: String(deliveryId), attempt: { $lte: Number(throughAttempt) } });
    },
    async pruneFinished(before, limit) {
      const ended = await Outbox.find({ status: { $in: ['delivered', 'dead'] }, lastAttemptAt: { $lt: before } }, { _id: 1 })
        .limit(Math.max(1, Math.floor(limit)))
        .lean<{ _id: string }[]>();
      return forget(ended.map((d) => d._id));
    },
    async pruneHeld(before, limit) {
      const disabled = (await Subscriptions.find({ disabledReason: { $ne: null } }, { _id: 1 }).lean<{ _id: string }[]>()).map((d) => d._id);
      if (disabled.length === 0) return 0;
      const held = await Outbox.find({ subscriptionId: { $in: disabled }, status: { $in: OPEN }, createdAt: { $lt: before } }, { _id: 1 })
        .limit(Math.max(1, Math.floor(limit)))
        .lean<{ _id: string }[]>();
      return forget(held.map((d) => d._id));
    },
  };
}
