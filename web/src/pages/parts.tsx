import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, type QueueSummary } from '../api.js';
import { queueHref, type QueueRef } from '../route.js';
import { relative, when } from '../time-words.js';

export { duration, relative, when } from '../time-words.js';

/** What keeps a queue from moving, each with its fix (and, for a blocked landing, when the queue tries again). */
export function Problems({ problems, compact = false, now = Date.now() }: { problems: QueueSummary['problems']; compact?: boolean; now?: number }) {
  if (problems.length === 0) return compact ? <span class="ok">none</span> : null;
  return (
    <ul class="problems" aria-label="Problems">
      {problems.map((p) => (
        <li key={p.kind} class="problem">
          <strong>{p.kind.replace(/_/g, ' ')}</strong> since {when(p.since)}
          {p.nextTryAt && (
            <span class="next-try">
              {' '}
              · tries again by itself {Date.parse(p.nextTryAt) <= now ? 'any moment now' : `${relative(p.nextTryAt, now)} (${when(p.nextTryAt)})`}
            </span>
          )}
          {!compact && <div>{p.message}</div>}
        </li>
      ))}
    </ul>
  );
}

/** The time now, again every `everyMs`: relative times ("merges in 8 min") stay true on a page nothing reloads. */
export function useNow(everyMs = 30_000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

/**
 * Shows only the newest of overlapping reads: live changes start a read a second, and a slow answer arriving after a
 * newer one would put the older view back.
 */
export function useLatest(): <T>(read: Promise<T>, shown: (value: T) => void, failed: (error: Error) => void) => void {
  const latest = useRef(0);
  return useCallback(<T,>(read: Promise<T>, shown: (value: T) => void, failed: (error: Error) => void) => {
    const ticket = ++latest.current;
    read.then(
      (value) => ticket === latest.current && shown(value),
      (error: Error) => ticket === latest.current && failed(error),
    );
  }, []);
}

/** Said when the page no longer hears of changes: what it shows may be old. */
export function LiveStopped({ stopped }: { stopped: boolean }) {
  if (!stopped) return null;
  return (
    <p role="status" class="error">
      Live updates stopped (signed out elsewhere, or the service restarted): what this page shows may be old. Reload the page.
    </p>
  );
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

/**
 * The queue's id, which live updates name (pages address queues by repository and branch). A failed read is tried
 * again, 2 s after the first and doubling to a minute (found by review: never retried, a page then took every queue's
 * change for its own).
 */
export function useQueueId(queue: QueueRef): string | null {
  const [queueId, setQueueId] = useState<string | null>(null);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let gone = false;
    const read = (waitMs: number) =>
      api.queueId(queue.repo, queue.targetBranch).then(
        (id) => !gone && setQueueId(id),
        () => {
          if (!gone) timer = setTimeout(() => void read(Math.min(waitMs * 2, 60_000)), waitMs);
        },
      );
    setQueueId(null);
    void read(2_000);
    return () => {
      gone = true;
      clearTimeout(timer);
    };
  }, [queue.repo.host, queue.repo.owner, queue.repo.name, queue.targetBranch]);
  return queueId;
}
