import type { WebhookStore } from '../ports/webhook-store.js';

/** How long a delivered or dead outgoing webhook delivery stays listed (listWebhookDeliveries) and redeliverable, and a held one waits. */
export const OUTBOX_MEMORY_MS = 14 * 24 * 60 * 60 * 1000;
/** Deliveries forgotten per maintenance round, in batches: a backlog shrinks over rounds without one long stall. */
const PER_ROUND = 20_000;
const BATCH = 1_000;

/**
 * Forgets deliveries that ended before `before` (each row holds its event's whole body), and those held that long for
 * a disabled endpoint (never attempted: see endpoint-health.ts), up to PER_ROUND of each.
 */
export async function forgetFinishedDeliveries(store: WebhookStore, before: Date): Promise<number> {
  return (await inBatches((limit) => store.pruneFinished(before, limit))) + (await inBatches((limit) => store.pruneHeld(before, limit)));
}

async function inBatches(prune: (limit: number) => Promise<number>): Promise<number> {
  let forgotten = 0;
  while (forgotten < PER_ROUND) {
    const batch = await prune(BATCH);
    forgotten += batch;
    if (batch < BATCH) break;
  }
  return forgotten;
}
