import { useEffect, useRef } from 'preact/hooks';
import { coalescedReads } from './coalesced-reads.js';

/**
 * Calls `onChange` when the server says one of these queues changed (Server-Sent
 * Events on /ui/live; the browser reconnects by itself). One stream per page; it
 * holds no history, so a page left open for a day uses what it used at first.
 * Reads are coalesced (coalesced-reads.ts): at most one per `minIntervalMs`.
 */
export function useLiveQueue(queueId: string | null, onChange: () => void, minIntervalMs = 1_000): void {
  const latest = useRef(onChange);
  latest.current = onChange;
  useEffect(() => {
    const source = new EventSource('/ui/live');
    const reads = coalescedReads(() => latest.current(), minIntervalMs, () => document.hidden);
    const changed = (event: MessageEvent<string>) => {
      const { queueId: changedId } = JSON.parse(event.data) as { queueId: string };
      if (queueId === null || changedId === queueId) reads.changed();
    };
    source.addEventListener('queue', changed);
    // After a reconnect, changes may have been missed: read again.
    source.addEventListener('hello', () => reads.changed());
    document.addEventListener('visibilitychange', reads.shown);
    return () => {
      source.close();
      document.removeEventListener('visibilitychange', reads.shown);
      reads.stop();
    };
  }, [queueId, minIntervalMs]);
}
