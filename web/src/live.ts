import { useEffect, useRef, useState } from 'preact/hooks';
import { coalescedReads } from './coalesced-reads.js';

/**
 * Calls `onChange` when the server says one of these queues changed (Server-Sent
 * Events on /ui/live; the browser reconnects by itself). One stream per page; it
 * holds no history, so a page left open for a day uses what it used at first.
 * Reads are coalesced (coalesced-reads.ts): at most one per `minIntervalMs`.
 * True once the stream has stopped for good (the browser gives up after a refusal: the session ended), so the page
 * can say that what it shows may be old.
 */
export function useLiveQueue(queueId: string | null, onChange: () => void, minIntervalMs = 1_000): boolean {
  const latest = useRef(onChange);
  latest.current = onChange;
  // The queue listened for is read at each change, so learning its id does not open a second stream (found by review).
  const watched = useRef(queueId);
  watched.current = queueId;
  const [stopped, setStopped] = useState(false);
  useEffect(() => {
    const source = new EventSource('/ui/live');
    setStopped(false);
    // A dropped connection is retried by the browser (readyState CONNECTING); a refused one is not (CLOSED).
    source.onerror = () => setStopped(source.readyState === EventSource.CLOSED);
    const reads = coalescedReads(() => latest.current(), minIntervalMs, () => document.hidden);
    const changed = (event: MessageEvent<string>) => {
      const { queueId: changedId } = JSON.parse(event.data) as { queueId: string };
      if (watched.current === null || changedId === watched.current) reads.changed();
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
  }, [minIntervalMs]);
  return stopped;
}
