import { useEffect, useState } from 'preact/hooks';
import { api, type QueueSummary } from '../api.js';
import { queueHref, type QueueRef } from '../route.js';

/** What keeps a queue from moving, each with its fix. */
export function Problems({ problems, compact = false }: { problems: QueueSummary['problems']; compact?: boolean }) {
  if (problems.length === 0) return compact ? <span class="ok">none</span> : null;
  return (
    <ul class="problems" aria-label="Problems">
      {problems.map((p) => (
        <li key={p.kind} class="problem">
          <strong>{p.kind.replace(/_/g, ' ')}</strong> since {when(p.since)}
          {!compact && <div>{p.message}</div>}
        </li>
      ))}
    </ul>
  );
}

/** A time as people read it, in their own zone. */
export function when(iso: string | undefined): string {
  if (!iso) return '–';
  return new Date(iso).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** "in 12 min" / "3 min ago". */
export function relative(iso: string | undefined, now = Date.now()): string {
  if (!iso) return '–';
  const minutes = Math.round((new Date(iso).getTime() - now) / 60_000);
  if (minutes === 0) return 'now';
  return minutes > 0 ? `in ${minutes} min` : `${-minutes} min ago`;
}

export function StateBadge({ state }: { state: string }) {
  return <span class={`badge ${state.toLowerCase()}`}>{state.replace(/_/g, ' ')}</span>;
}

/** An error the API answered, read out by screen readers. */
export function ErrorAlert({ error }: { error: string }) {
  if (!error) return null;
  return (
    <p role="alert" class="error">
      {error}
    </p>
  );
}

export function BackToQueue({ queue }: { queue: QueueRef }) {
  return (
    <p>
      <a href={queueHref(queue)}>
        ← {queue.repo.owner}/{queue.repo.name} → {queue.targetBranch}
      </a>
    </p>
  );
}

/** The queue's id, which live updates name (pages address queues by repository and branch). */
export function useQueueId(queue: QueueRef): string | null {
  const [queueId, setQueueId] = useState<string | null>(null);
  useEffect(() => {
    api.board(queue.repo, queue.targetBranch).then((b) => setQueueId(b.queue.id), () => undefined);
  }, [queue.repo.host, queue.repo.owner, queue.repo.name, queue.targetBranch]);
  return queueId;
}
