import type { QueueSummary } from '../api.js';

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
