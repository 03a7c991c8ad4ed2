import type { RepoRef } from '../domain/repo.js';
/**
 * Outgoing webhooks (the seed's "Events"): what the queue tells other systems.
 * The payload is the supplement's; delivery (subscriptions, signing, retries)
 * lives behind this port.
 */
export const WEBHOOK_EVENT_TYPES = [
  'pull_request.submitted',
  'pull_request.queued',
  'pull_request.testing',
  'pull_request.merged',
  'pull_request.failed',
  'pull_request.canceled',
  'pull_request_batch.testing',
  'pull_request_batch.pending_failure',
  'pull_request_batch.merged',
  'pull_request_batch.failed',
  /** The queue has not moved for its stallAlertMinutes while PRs wait (pr_number null). */
  'queue.stalled',
  /** A stalled queue moved again, emptied or was paused (pr_number null). */
  'queue.resumed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** One event as receivers get it (Standard Webhooks body). */
export interface WebhookPayload {
  type: WebhookEventType;
  timestamp: string;
  repository: { host: string; owner: string; name: string };
  target_branch: string;
  /** null for queue events (queue.stalled, queue.resumed). */
  pr_number: number | null;
  author: string | null;
  batched: boolean;
  is_bisection: boolean;
  test_branch: string | null;
  test_branch_sha: string | null;
  failure_reason?: string;
  cancellation_reason?: string;
}

/** An event to deliver: its id is stable across replays, so receivers can drop repeats. */
export interface OutgoingEvent {
  /** `evt_<queue>_<seq>_<pr>`: the same decision always gives the same id. */
  id: string;
  /** For per-PR ordering: events of one PR are delivered in `sequence` order. */
  orderingKey: string;
  sequence: number;
  payload: WebhookPayload;
}

export interface WebhookOutbox {
  /** Records each event for every matching subscription of its organization; a repeated id is a no-op. */
  publish(...events: OutgoingEvent[]): Promise<void>;
  /**
   * Whether any subscription receiving events could want events of this repository: when
   * none does, the runner does not build events nobody receives. Absent: yes.
   */
  hasSubscribers?(repo: RepoRef): Promise<boolean>;
}
