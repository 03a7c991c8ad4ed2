import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type QueueHealthView } from '../api.js';
import { useLiveQueue } from '../live.js';
import type { QueueRef } from '../route.js';
import { BackToQueue, duration, ErrorAlert, LiveStopped, useLatest, useQueueId } from './parts.js';
import { Chart } from '../chart.js';

const WINDOWS = [
  { label: '6 hours', hours: 6, bucketMinutes: 15 },
  { label: '24 hours', hours: 24, bucketMinutes: 60 },
  { label: '7 days', hours: 24 * 7, bucketMinutes: 6 * 60 },
] as const;

/** The queue's health over a chosen window, from stored facts. */
export function HealthPage({ queue }: { queue: QueueRef }) {
  const [windowIndex, setWindowIndex] = useState(1);
  const [health, setHealth] = useState<QueueHealthView | null>(null);
  const [error, setError] = useState('');
  const chosen = WINDOWS[windowIndex] ?? WINDOWS[1];
  const latest = useLatest();
  const load = useCallback(() => {
    latest(
      api.health(queue.repo, queue.targetBranch, chosen.hours, chosen.bucketMinutes),
      (h) => {
        setHealth(h);
        setError('');
      },
      (e) => setError(e.message),
    );
  }, [latest, queue.repo.host, queue.repo.owner, queue.repo.name, queue.targetBranch, chosen.hours, chosen.bucketMinutes]);
  useEffect(load, [load]);
  // Its buckets are minutes to days wide, and a read spans the whole window: once a minute is enough.
  const stopped = useLiveQueue(useQueueId(queue), load, 60_000);
  const x = health?.buckets.map((b) => Date.parse(b.start) / 1000) ?? [];
  const reasons = [...new Set(health?.buckets.flatMap((b) => Object.keys(b.ejected)) ?? [])];
  return (
    <section>
      <BackToQueue queue={queue} />
      <h1>Health</h1>
      <label for="window">Window </label>
      <select id="window" value={windowIndex} onChange={(e) => setWindowIndex(Number((e.target as HTMLSelectElement).value))}>
        {WINDOWS.map((w, i) => (
          <option key={w.label} value={i}>
            {w.label}
          </option>
        ))}
      </select>
      <ErrorAlert error={error} />
      <LiveStopped stopped={stopped} />
      {health && (
        <>
          <dl class="totals">
            <dt>Merged</dt>
            <dd>{health.totals.merged}</dd>
            <dt>Time in queue p50 / p95</dt>
            <dd>
              {health.totals.timeInQueueP50 === null ? '–' : duration(health.totals.timeInQueueP50)} / {health.totals.timeInQueueP95 === null ? '–' : duration(health.totals.timeInQueueP95)}
            </dd>
            <dt>CI runs per merged PR</dt>
            <dd>{health.totals.ciRunsPerMerged ?? '–'}</dd>
            <dt>Ejections</dt>
            <dd>{Object.entries(health.totals.ejected).map(([r, n]) => `${r.replace(/_/g, ' ')}: ${n}`).join(', ') || 'none'}</dd>
            <dt>Restarts</dt>
            <dd>{health.totals.restarts}</dd>
            <dt>Retries of failed runs</dt>
            <dd>{health.totals.retries}</dd>
          </dl>
          <Chart title="Time in queue (minutes)" x={x} series={[{ label: 'p50', values: health.buckets.map((b) => b.timeInQueueP50) }, { label: 'p95', values: health.buckets.map((b) => b.timeInQueueP95) }]} />
          <Chart title={`Merged per ${chosen.bucketMinutes >= 60 ? `${chosen.bucketMinutes / 60} h` : `${chosen.bucketMinutes} min`}`} x={x} series={[{ label: 'merged', values: health.buckets.map((b) => b.merged) }]} bars />
          <Chart title="CI runs per merged PR" x={x} series={[{ label: 'CI runs / merged', values: health.buckets.map((b) => (b.merged > 0 ? b.ciRuns / b.merged : null)) }]} />
          <Chart title="Ejections by reason" x={x} series={reasons.map((r) => ({ label: r.replace(/_/g, ' '), values: health.buckets.map((b) => b.ejected[r] ?? 0) }))} bars />
          <Chart title="Restarts and retries" x={x} series={[{ label: 'restarts', values: health.buckets.map((b) => b.restarts) }, { label: 'retries', values: health.buckets.map((b) => b.retries) }]} bars />
        </>
      )}
    </section>
  );
}
