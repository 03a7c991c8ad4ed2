import { useEffect, useRef } from 'preact/hooks';

/**
 * Calls `onChange` when the server says one of these queues changed (Server-Sent
 * Events on /ui/live; the browser reconnects by itself). One stream per page; it
 * holds no history, so a page left open for a day uses what it used at first.
 */
export function useLiveQueue(queueId: string | null, onChange: () => void): void {
  const latest = useRef(onChange);
  latest.current = onChange;
  useEffect(() => {
    const source = new EventSource('/ui/live');
    const changed = (event: MessageEvent<string>) => {
      const { queueId: changedId } = JSON.parse(event.data) as { queueId: string };
      if (queueId === null || changedId === queueId) latest.current();
    };
    source.addEventListener('queue', changed);
    // After a reconnect, changes may have been missed: read again.
    source.addEventListener('hello', () => latest.current());
    return () => source.close();
  }, [queueId]);
}
