import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError, type PullRequestView, type TestingDetailsView } from '../api.js';
import { useLiveQueue } from '../live.js';
import { externalHref, type QueueRef } from '../route.js';
import { BackToQueue, ErrorAlert, LiveStopped, relative, StateBadge, useLatest, useNow, useQueueId, when } from './parts.js';

const ENDED = new Set(['MERGED', 'FAILED', 'CANCELLED']);

/** One PR: its timeline with reasons, its latest test run with checks and links, cancel and restart. */
export function PullRequestPage({ queue, number }: { queue: QueueRef; number: number }) {
  const [pr, setPr] = useState<PullRequestView | null>(null);
  // undefined while the first read is under way; null when not tested yet.
  const [run, setRun] = useState<TestingDetailsView | null | undefined>(undefined);
  const [error, setError] = useState('');
  const [runError, setRunError] = useState('');
  const latestPr = useLatest();
  const latestRun = useLatest();
  const now = useNow();
  const load = useCallback(() => {
    latestPr(
      api.pullRequest(queue.repo, queue.targetBranch, number),
      (p) => {
        setPr(p);
        setError('');
      },
      (e) => setError(e.message),
    );
    latestRun(
      api.testingDetails(queue.repo, queue.targetBranch, number),
      (r) => {
        setRun(r);
        setRunError('');
      },
      // Not tested yet is a 404 here, not an error worth showing; another failure is (the run shown may be old).
      (e) => {
        if (!(e instanceof ApiError && e.status === 404)) return setRunError(e.message);
        setRun(null);
        setRunError('');
      },
    );
  }, [latestPr, latestRun, queue.repo.host, queue.repo.owner, queue.repo.name, queue.targetBranch, number]);
  useEffect(load, [load]);
  const stopped = useLiveQueue(useQueueId(queue), load);
  const act = async (what: 'cancel' | 'restart') => {
    // Taking a PR out of the queue loses its place: asked once more (found by a review of the dashboard).
    if (what === 'cancel' && !confirm(`Take #${number} out of the queue? It loses its place; submitting it again puts it at the end.`)) return;
    try {
      await (what === 'cancel' ? api.cancel(queue.repo, queue.targetBranch, number) : api.restart(queue.repo, queue.targetBranch, number));
      load();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <section>
      <BackToQueue queue={queue} />
      <h1>
        #{number} {pr?.prTitle ?? ''} {pr && <StateBadge state={pr.state} />}
      </h1>
      <ErrorAlert error={error} />
      <LiveStopped stopped={stopped} />
      {pr && (
        <>
          <p class="meta">
            {pr.prAuthor && <>by {pr.prAuthor} · </>}submitted {when(pr.submittedAt)} · priority {pr.priorityName ?? pr.priorityValue}
            {pr.estimatedMergeAt && <> · forecast to merge {relative(pr.estimatedMergeAt, now)}</>}
            {pr.notReadyReason && <> · not ready: {pr.notReadyReason.replace(/_/g, ' ')}</>}
          </p>
          {pr.waitingReason && <p class="hint">{pr.waitingReason}</p>}
          <div class="actions" role="group" aria-label="Pull request actions">
            <button type="button" disabled={ENDED.has(pr.state)} onClick={() => void act('cancel')}>
              Cancel
            </button>
            <button type="button" disabled={pr.state !== 'TESTING' && pr.state !== 'PENDING_FAILURE'} onClick={() => void act('restart')}>
              Restart tests
            </button>
          </div>
          <h2>Timeline</h2>
          <ol class="timeline">
            {(pr.timeline ?? []).map((t, i) => (
              <li key={i}>
                <time dateTime={t.timestamp}>{when(t.timestamp)}</time> <StateBadge state={t.state} /> <span class="reason">{t.reason.replace(/_/g, ' ')}</span>
                {t.detail && <span class="hint"> — {t.detail}</span>}
              </li>
            ))}
          </ol>
        </>
      )}
      <h2>Latest test run</h2>
      <ErrorAlert error={runError} />
      {run === undefined ? (
        !runError && <p class="loading">Loading…</p>
      ) : run === null ? (
        <p class="hint">Not tested yet.</p>
      ) : (
        <div class="run">
          <p>
            <StateBadge state={run.status} /> <code>{run.testBranch}</code> {run.testBranchSha && <code>{run.testBranchSha.slice(0, 7)}</code>} on base <code>{run.baseSha.slice(0, 7)}</code>
            {run.isBisection && <span class="badge bisection">bisection half</span>} · started {when(run.createdAt)}
            {run.finishedAt && <> · finished {when(run.finishedAt)}</>}
          </p>
          <p class="hint">
            Tests #{run.testedPullRequests.map((p) => p.prNumber).join(', #')}
            {run.dependentPrs.length > 0 && <> on top of #{run.dependentPrs.map((p) => p.prNumber).join(', #')}</>}; required: {run.requiredStatuses.join(', ') || 'none'} ({run.requiredStatusesSource.replace(/_/g, ' ')})
          </p>
          <ul class="checks">
            {run.checkSuites.flatMap((s) => s.checkRuns).map((c, i) => (
              <li key={`${c.name}:${i}`}>
                {externalHref(c.url) ? <a href={externalHref(c.url)}>{c.name}</a> : c.name}: {c.conclusion ?? c.status}
              </li>
            ))}
            {run.statusChecks.map((c) => (
              <li key={c.context}>
                {externalHref(c.url) ? <a href={externalHref(c.url)}>{c.context}</a> : c.context}: {c.state}
              </li>
            ))}
          </ul>
          {run.failureStatuses.length > 0 && <p class="error">Failed: {run.failureStatuses.join(', ')}</p>}
        </div>
      )}
    </section>
  );
}
