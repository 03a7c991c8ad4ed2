import type { QueueRecord } from '../domain/records.js';
import type { EmittedEvent } from '../engine/model.js';
import type { Stores } from '../ports/stores.js';
import type { OutgoingEvent, WebhookPayload } from '../ports/webhook-outbox.js';

/**
 * The engine's emitted event as outgoing webhooks, one per PR (the payload has
 * one `pr_number`). Ids derive from the queue and the event's number, so a
 * replayed action publishes the same ids and receivers can drop repeats.
 */
export async function outgoingEvents(stores: Stores, queue: QueueRecord, event: EmittedEvent, at: Date): Promise<OutgoingEvent[]> {
  if (event.type === 'queue.stalled' || event.type === 'queue.resumed') return [queueEvent(queue, event, at)];
  const run = event.runId ? await stores.testRuns.findByEngineRunId(queue.id, event.runId) : null;
  const batch = event.type.startsWith('pull_request_batch.');
  const events: OutgoingEvent[] = [];
  for (const prNumber of event.prNumbers) {
    const entry = await stores.entries.find(queue.id, prNumber);
    const payload: WebhookPayload = {
      type: event.type,
      timestamp: at.toISOString(),
      repository: { ...queue.repo },
      target_branch: queue.targetBranch,
      pr_number: prNumber,
      author: entry?.facts?.author ?? null,
      batched: batch || (run?.testedPullRequests.length ?? 0) > 1,
      is_bisection: event.isBisection ?? run?.isBisection ?? false,
      test_branch: run?.testBranch ?? null,
      test_branch_sha: run?.testBranchSha ?? null,
    };
    if (event.reason && (event.type.endsWith('.failed') || event.type.endsWith('.pending_failure'))) payload.failure_reason = event.reason;
    if (event.reason && event.type.endsWith('.canceled')) payload.cancellation_reason = event.reason;
    events.push({ id: `evt_${queue.id}_${event.seq}_${prNumber}`, orderingKey: `${queue.id}:${prNumber}`, sequence: event.seq, payload });
  }
  return events;
}

/** A queue-wide event: one per subscription, ordered with the queue's other queue-wide events. */
function queueEvent(queue: QueueRecord, event: EmittedEvent, at: Date): OutgoingEvent {
  const payload: WebhookPayload = {
    type: event.type,
    timestamp: at.toISOString(),
    repository: { ...queue.repo },
    target_branch: queue.targetBranch,
    pr_number: null,
    author: null,
    batched: false,
    is_bisection: false,
    test_branch: null,
    test_branch_sha: null,
  };
  return { id: `evt_${queue.id}_${event.seq}_queue`, orderingKey: `${queue.id}:queue`, sequence: event.seq, payload };
}
