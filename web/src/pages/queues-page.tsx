import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type QueueSummary, type Session } from '../api.js';
import { useLiveQueue } from '../live.js';
import { queueHref } from '../route.js';
import { duration, ErrorAlert, LiveStopped, Problems, useLatest, useNow } from './parts.js';

/** Every queue of the organization: state, depth, testing, merged in a day, p95 time in queue, problems. */
export function QueuesPage({ session }: { session: Session }) {
  const [queues, setQueues] = useState<QueueSummary[] | null>(null);
  const [error, setError] = useState('');
  const [sandbox, setSandbox] = useState(false);
  const latest = useLatest();
  const now = useNow();
  const load = useCallback(() => {
    latest(
      api.listQueues(),
      (r) => {
        setQueues(r.queues);
        setError('');
      },
      (e) => setError(e.message),
    );
  }, [latest]);
  useEffect(load, [load]);
  useEffect(() => {
    fetch('/ui/config').then((r) => r.json()).then((c: { sandbox: boolean }) => setSandbox(c.sandbox && session.organization.host === 'sandbox'), () => undefined);
  }, [session]);
  const stopped = useLiveQueue(null, load);
  const demo = async () => {
    try {
      const created = await api.createDemo();
      location.hash = queueHref(created);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <section>
      <h1>Queues</h1>
      <ErrorAlert error={error} />
      <LiveStopped stopped={stopped} />
      {sandbox && (
        <p>
          <button type="button" onClick={() => void demo()}>
            Start a demo queue
          </button>{' '}
          <span class="hint">passing, failing, flaky and conflicting PRs on the sandbox, to watch live</span>
        </p>
      )}
      {queues && queues.length === 0 && <p>No queues yet for {session.organization.owner}.</p>}
      {queues && queues.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Queues</caption>
            <thead>
              <tr>
                <th scope="col">Queue</th>
                <th scope="col">State</th>
                <th scope="col">Depth</th>
                <th scope="col">Testing</th>
                <th scope="col">Merged (24 h)</th>
                <th scope="col">p95 in queue</th>
                <th scope="col">Problems</th>
              </tr>
            </thead>
            <tbody>
              {queues.map((q) => (
                <tr key={q.id}>
                  <th scope="row">
                    <a href={queueHref(q)}>
                      {q.repo.owner}/{q.repo.name} → {q.targetBranch}
                    </a>
                  </th>
                  <td>
                    <span class={`badge ${q.state.toLowerCase()}`}>{q.state}</span>
                  </td>
                  <td>{q.depth}</td>
                  <td>{q.testing}</td>
                  <td>{q.merged24h}</td>
                  <td>{q.timeInQueueP95Minutes === null ? '–' : duration(q.timeInQueueP95Minutes)}</td>
                  <td>
                    <Problems problems={q.problems} compact now={now} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
