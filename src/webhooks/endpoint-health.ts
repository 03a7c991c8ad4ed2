import type { WebhookSubscriptionRecord } from '../ports/webhook-store.js';

/** The reason an endpoint its owner disabled carries (updateWebhook `enabled: false`). */
export const DISABLED_BY_OWNER = 'Disabled through updateWebhook.';

/**
 * Whether new events are recorded for the endpoint. An endpoint disabled for failing still receives them, held (not
 * attempted) until its owner enables it again, then delivered in order: retries end after about two days and the
 * endpoint is disabled after one, so dropping events then lost for good what happened while a receiver was down over
 * a weekend (found by review). Each held event is kept as long as any delivery is remembered (OUTBOX_MEMORY_MS), so
 * however long the endpoint stays disabled its owner gets the last 14 days' events, with no gap (a cut-off on the
 * endpoint's disabling left one: found by the next review). An endpoint its owner disabled receives nothing.
 */
export function receivesEvents(subscription: WebhookSubscriptionRecord): boolean {
  return subscription.disabledReason !== DISABLED_BY_OWNER;
}

const HOUR = 3_600_000;

/** When an endpoint counts as failing continuously. */
export interface DisablePolicy {
  /** Failing without a single success for at least this long… */
  disableAfterMs: number;
  /** …over at least this many attempts in a row, or until a delivery went dead. */
  disableAfterFailures: number;
}

export const DEFAULT_DISABLE_POLICY: DisablePolicy = { disableAfterMs: 24 * HOUR, disableAfterFailures: 10 };

/**
 * Why an endpoint is to be disabled after this failed attempt, or null. A
 * single success resets the run (see recordSuccess), so an endpoint that
 * recovers in between is never disabled.
 */
export function disableReason(
  subscription: WebhookSubscriptionRecord,
  at: Date,
  attempt: { wentDead: boolean; error: string },
  policy: DisablePolicy = DEFAULT_DISABLE_POLICY,
): string | null {
  if (subscription.disabledReason !== null || subscription.failingSince === null) return null;
  const failingMs = at.getTime() - subscription.failingSince.getTime();
  if (failingMs < policy.disableAfterMs) return null;
  if (subscription.consecutiveFailures < policy.disableAfterFailures && !attempt.wentDead) return null;
  const hours = Math.floor(failingMs / HOUR);
  return (
    `Disabled automatically at ${at.toISOString()}: every delivery attempt failed for ${hours} hour${hours === 1 ? '' : 's'} ` +
    `(${subscription.consecutiveFailures} attempts in a row; the last: ${attempt.error.replace(/\.$/, '')}). Re-enable it with updateWebhook once the endpoint works.`
  );
}
