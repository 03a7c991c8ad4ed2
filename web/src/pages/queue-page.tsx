import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type BoardRun, type QueueBoard } from '../api.js';
import { useLiveQueue } from '../live.js';
import { externalHref, queueHref, type QueueRef } from '../route.js';
import { ErrorAlert, LiveStopped, Problems, relative, StateBadge, useLatest, useNow, when } from './parts.js';

/** One queue: its runs in flight, waiting PRs with position and ETA, not-ready ones with reasons, what ended lately. */
export function QueuePage({ queue }: { queue: QueueRef }) {
  const [board, setBoard] = useState<QueueBoard | null>(null);
  const [error, setError] = useState('');
  const latest = useLatest();
  const now = useNow();
  const load = useCallback(() => {
    latest(
      api.board(queue.repo, queue.targetBranch),
      (b) => {
        setBoard(b);
        setError('');
      },
      (e) => setError(e.message),
    );
  }, [latest, queue.repo.host, queue.repo.owner, queue.repo.name, queue.targetBranch]);
  useEffect(load, [load]);
  // Every queue's changes until this one's id is known (a first read that failed is retried by the next change).
  const stopped = useLiveQueue(board?.queue.id ?? null, load);
  const setState = async (state: 'RUNNING' | 'PAUSED' | 'DRAINING') => {
    // Stopping the queue for everyone is asked once more (found by a review of the dashboard); resuming is not.
    const stopping = state === 'PAUSED' ? 'Pause the queue? Nothing starts or lands until it is resumed.' : state === 'DRAINING' ? 'Drain the queue? What is in flight finishes, nothing new starts.' : null;
    if (stopping && !confirm(stopping)) return;
    try {
      await api.setQueueState(queue.repo, queue.targetBranch, state);
      load();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  // An update naming nothing but the queue: the engine tries at once, and the state stays whatever it is now (the
  // page's may be old: another operator may have paused it).
  const tryLanding = async () => {
    try {
      await api.retryLanding(queue.repo, queue.targetBranch);
      load();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  if (!board) return error ? <p role="alert" class="error">{error}</p> : <p class="loading">Loading…</p>;
  const { queue: q, runs, recentlyEnded, forecast } = board;
  // In line: everything admitted, in queue order (those under test first), each with its forecast.
  const waiting = q.enqueuedPullRequests.filter((pr) => pr.state !== 'NOT_READY');
  const notReady = q.enqueuedPullRequests.filter((pr) => pr.state === 'NOT_READY');
  const pr = (n: number) => queueHref(queue, `/pr/${n}`);
  const blocked = q.problems.some((p) => p.kind === 'landing_blocked');
  // A PR's own forecast is missing for a queue-wide reason, said once here rather than per PR.
  const noForecast = q.state === 'PAUSED' ? 'no forecast: the queue is paused' : blocked ? 'no forecast while landing is blocked' : 'no forecast yet';
  return (
    <section>
      <h1>
        {q.repo.owner}/{q.repo.name} → {q.targetBranch} <StateBadge state={q.state} />
      </h1>
      <p class="meta">
        {q.mode} mode · concurrency {q.concurrency}
        {q.batch ? ` · batches of ${q.batchingMinSize}+` : ''} · lands by {q.mergeMethod.replace('_', ' ')} · CI ≈ {forecast.ciDurationMinutes} min, {Math.round(forecast.failureRate * 100)}% failing (
        {forecast.basedOnRuns} runs) · <a href={queueHref(queue, '/health')}>Health</a> · <a href={queueHref(queue, '/settings')}>Settings</a>
      </p>
      <div class="actions" role="group" aria-label="Queue state">
        <button type="button" disabled={q.state === 'RUNNING'} onClick={() => void setState('RUNNING')}>
          Resume
        </button>
        <button type="button" disabled={q.state === 'PAUSED'} onClick={() => void setState('PAUSED')}>
          Pause
        </button>
        <button type="button" disabled={q.state === 'DRAINING'} onClick={() => void setState('DRAINING')}>
          Drain
        </button>
      </div>
      <ErrorAlert error={error} />
      <LiveStopped stopped={stopped} />
      <Problems problems={q.problems} now={now} />
      {blocked &&
        (q.state === 'PAUSED' ? (
          <p class="hint">The queue is paused: Resume tries landing again.</p>
        ) : (
          <p>
            <button type="button" onClick={() => void tryLanding()}>
              Try landing now
            </button>{' '}
            <span class="hint">once the fix is made (any change of the queue tries at once)</span>
          </p>
        ))}

      <h2>{q.mode === 'parallel' ? 'Lanes in flight' : 'Runs in flight'}</h2>
      {runs.length === 0 ? (
        <p class="hint">Nothing is being tested.</p>
      ) : q.mode === 'parallel' ? (
        lanesOf(runs).map((lane, i) => (
          <div key={lane[0]?.engineRunId} class="lane">
            <h3>Lane {i + 1}</h3>
            <Runs runs={lane} prHref={pr} now={now} />
          </div>
        ))
      ) : (
        <Runs runs={runs} prHref={pr} now={now} />
      )}

      <h2>In line ({waiting.length})</h2>
      {waiting.length === 0 ? (
        <p class="hint">No PR is in line.</p>
      ) : (
        <ol class="prs">
          {waiting.map((p) => (
            <li key={p.id} data-pr={p.prNumber}>
              <a href={pr(p.prNumber)}>
                #{p.prNumber} {p.prTitle ?? ''}
              </a>{' '}
              <StateBadge state={p.state} /> <span class="eta">{p.estimatedMergeAt ? `merges ${relative(p.estimatedMergeAt, now)} (${when(p.estimatedMergeAt)})` : noForecast}</span>
              {p.waitingReason && q.problems.length === 0 && <div class="hint">{p.waitingReason}</div>}
            </li>
          ))}
        </ol>
      )}

      <h2>Not ready ({notReady.length})</h2>
      {notReady.length === 0 ? (
        <p class="hint">None.</p>
      ) : (
        <ul class="prs">
          {notReady.map((p) => (
            <li key={p.id} data-pr={p.prNumber}>
              <a href={pr(p.prNumber)}>
                #{p.prNumber} {p.prTitle ?? ''}
              </a>{' '}
              <span class="reason">{(p.notReadyReason ?? 'waiting').replace(/_/g, ' ')}</span>
            </li>
          ))}
        </ul>
      )}

      <h2>Ended in the last day</h2>
      {recentlyEnded.length === 0 ? (
        <p class="hint">Nothing yet.</p>
      ) : (
        <ul class="prs">
          {recentlyEnded.map(({ pullRequest: p, reason, detail }) => (
            <li key={p.id} data-pr={p.prNumber}>
              <a href={pr(p.prNumber)}>
                #{p.prNumber} {p.prTitle ?? ''}
              </a>{' '}
              <StateBadge state={p.state} /> <span class="reason">{reason.replace(/_/g, ' ')}</span>
              {detail && <span class="hint"> — {detail}</span>} <span class="hint">{relative(p.stateChangedAt, now)}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Runs as what they are: a chain (each on top of those ahead), batches of several PRs, bisection halves. */
function Runs({ runs, prHref, now }: { runs: BoardRun[]; prHref: (n: number) => string; now: number }) {
  return (
    <ol class="runs">
      {runs.map((run) => (
        <li key={run.engineRunId} class={`run ${run.status}`}>
          <div>
            <StateBadge state={run.status} /> {run.probeOf ? <span class="badge bisection" title="Tested in an idle CI slot ahead of that batch's failure; it decides nothing unless the batch fails">probe of {run.probeOf}</span> : run.isBisection && <span class="badge bisection">bisection half</span>} {run.pullRequests.length > 1 && <span class="badge batch">batch of {run.pullRequests.length}</span>}{' '}
            <span class="hint">started {relative(run.startedAt, now)}</span>
          </div>
          <div class="chain" aria-label="What the run tests, in order">
            <span class="base">base {run.baseSha.slice(0, 7)}</span>
            {run.ahead.map((n) => (
              <a key={`a${n}`} class="chip ahead" href={prHref(n)} title="ahead, included">
                #{n}
              </a>
            ))}
            {run.pullRequests.map((n) => (
              <a key={`u${n}`} class="chip unit" href={prHref(n)} title="decided by this run">
                #{n}
              </a>
            ))}
          </div>
          <div class="hint">
            {run.testBranch ? <code>{run.testBranch}</code> : 'test branch being built'}
            {run.checks.length > 0 && ' · '}
            {run.checks.map((c, i) => (
              <span key={`${c.name}:${i}`} class="check">
                {externalHref(c.url) ? <a href={externalHref(c.url)}>{c.name}</a> : c.name}: {c.conclusion ?? c.status}{' '}
              </span>
            ))}
            {run.failedChecks.length > 0 && (
              <span class="error">
                {' '}
                failed:{' '}
                {run.failedChecks.map((name, i) => {
                  // The failing check's own page, where the run reported one.
                  const href = externalHref((run.checks.find((c) => c.name === name && c.conclusion === 'failure') ?? run.checks.find((c) => c.name === name))?.url);
                  return (
                    <span key={`${name}:${i}`}>
                      {i > 0 && ', '}
                      {href ? <a href={href}>{name}</a> : name}
                    </span>
                  );
                })}
              </span>
            )}
          </div>
        </li>
      ))}
    </ol>
  );
}

/** Parallel mode: runs that share a PR (one builds on another's) are one lane; lanes never wait for each other. */
export function lanesOf(runs: BoardRun[]): BoardRun[][] {
  const lanes: Array<{ prs: Set<number>; runs: BoardRun[] }> = [];
  for (const run of runs) {
    const prs = new Set([...run.ahead, ...run.pullRequests]);
    const joined = lanes.filter((lane) => [...prs].some((n) => lane.prs.has(n)));
    const lane = { prs: new Set([...prs, ...joined.flatMap((l) => [...l.prs])]), runs: [...joined.flatMap((l) => l.runs), run] };
    for (const gone of joined) lanes.splice(lanes.indexOf(gone), 1);
    lanes.push(lane);
  }
  return lanes.map((lane) => lane.runs.sort((a, b) => a.seq - b.seq));
}
