import type { WebhookOutbox } from '../ports/webhook-outbox.js';
import type { WebhookStore } from '../ports/webhook-store.js';
import { WebhookDeliveryWorker, type WebhookDeliveryWorkerOptions, type WebhookWorkerLog } from './delivery-worker.js';
import { StoredWebhookOutbox } from './outbox.js';
import { SecretBox } from './secret-box.js';
import type { AddressLookup } from './url-safety.js';
import { webhookService, type WebhookService } from './webhook-service.js';

/** Outgoing webhooks, wired: the API's use cases, the outbox the queue publishes to, and the delivery worker. */
export interface OutgoingWebhooks {
  service: WebhookService;
  outbox: WebhookOutbox;
  worker: WebhookDeliveryWorker;
}

export interface OutgoingWebhooksOptions {
  store: WebhookStore;
  /** 32 bytes: MQ_WEBHOOK_SECRET_KEY or the local key file (loadWebhookSecretKey). */
  key: Buffer;
  /** MQ_WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  log: WebhookWorkerLog;
  metrics?: WebhookDeliveryWorkerOptions['metrics'];
  /** MQ_WEBHOOK_TIMEOUT_MS. */
  timeoutMs?: number;
  /** MQ_WEBHOOK_POLL_MS. */
  pollMs?: number;
  /** This replica's name in delivery claims. */
  owner?: string;
  lookup?: AddressLookup;
  now?: () => Date;
  /** Anything else of the worker's (tests: retry schedule, clock, random, hooks). */
  worker?: Partial<Omit<WebhookDeliveryWorkerOptions, 'store' | 'secrets'>>;
}

export function composeOutgoingWebhooks(options: OutgoingWebhooksOptions): OutgoingWebhooks {
  const secrets = new SecretBox(options.key);
  const now = options.now;
  const worker = new WebhookDeliveryWorker({
    store: options.store,
    secrets,
    log: options.log,
    allowPrivate: options.allowPrivate,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    ...(options.owner !== undefined ? { owner: options.owner } : {}),
    ...(options.lookup ? { lookup: options.lookup } : {}),
    ...(now ? { now: () => now().getTime() } : {}),
    ...options.worker,
  });
  const outbox = new StoredWebhookOutbox({ store: options.store, ...(now ? { now } : {}), onPublished: () => worker.nudge() });
  const service = webhookService({
    store: options.store,
    secrets,
    urlPolicy: { allowPrivate: options.allowPrivate, ...(options.lookup ? { lookup: options.lookup } : {}) },
    ...(now ? { now } : {}),
    onDue: () => worker.nudge(),
  });
  return { service, outbox, worker };
}
