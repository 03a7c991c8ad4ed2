import type { QueueEntryRecord, QueueRecord, TestRunRecord } from '../domain/records.js';
import type { EngineRun } from '../engine/model.js';
import type { Stores } from '../ports/stores.js';
import type { EnqueuedEntriesCache } from '../queue/enqueued-cache.js';
import { pullRequestViews, queueView } from '../queue/views.js';
import type { BoardRun, PullRequestView, QueueBoard } from '../api/schemas/dashboard.js';
import type { QueueForecast } from '../runner/queue-runner.js';
import type { RunsInFlight } from '../runner/runs-in-flight.js';
import type { RecordedMemo } from '../concurrency/recorded-memo.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const RECENT_SHOWN = 50;

/**
 * Everything a queue's page shows, in a bounded number of queries: the queue
 * view (served from the replica's cache at rest), the runs in flight as the
 * engine holds them (at most `concurrency` plus bisections, probes included, each
 * joined to its record by id), the PRs that ended in the last day, and each waiting PR's
 * forecast merge time. At rest (`cache`, `recent`: nothing recorded since the last ask) the
 * queue and the PRs that ended are not read again.
 */
export async function queueBoard(
  stores: Stores,
  queue: QueueRecord,
  inFlight: RunsInFlight | null,
  forecast: QueueForecast,
  now: number,
  cache?: EnqueuedEntriesCache,
  recent?: RecordedMemo<QueueBoard['recentlyEnded']>,
): Promise<QueueBoard> {
  const since = new Date(now - DAY_MS);
  const ended = async () => endedWithReasons(stores, queue, await stores.entries.page({ queueId: queue.id, states: ['MERGED', 'FAILED', 'CANCELLED'], since, take: RECENT_SHOWN }));
  const [view, recentlyEnded] = await Promise.all([queueView(stores, queue, cache), recent ? recent.get(stores.engine, queue.id, ended) : ended()]);
  const { byEntry: eta, history, samples } = forecast;
  for (const pr of view.enqueuedPullRequests) {
    const at = eta.get(pr.id);
    if (at !== undefined) pr.estimatedMergeAt = new Date(at).toISOString();
  }
  // Probes too: they take CI slots like any run (each says which batch it probes).
  const { runs: flying, prNumbers } = inFlight ?? { runs: [], prNumbers: new Map<string, number>() };
  const runs = await Promise.all(flying.map(async (run) => boardRun(run, await stores.testRuns.findByEngineRunId(queue.id, run.id), prNumbers)));
  return {
    queue: view,
    runs: runs.sort((a, b) => a.seq - b.seq),
    recentlyEnded,
    forecast: { ciDurationMinutes: Math.round((history.ciDurationMs / 60_000) * 10) / 10, failureRate: Math.round(history.failureRate * 100) / 100, basedOnRuns: samples },
  };
}

/** Ended PRs, newest first, each with the reason its last state change gave (e.g. failed_tests and the failing check). */
async function endedWithReasons(stores: Stores, queue: QueueRecord, ended: QueueEntryRecord[]): Promise<QueueBoard['recentlyEnded']> {
  const views = await pullRequestViews(stores, queue, ended);
  return ended
    .map((entry, i) => {
      const last = entry.timeline.at(-1);
      return { pullRequest: views[i] as PullRequestView, reason: last?.reason ?? entry.state.toLowerCase(), ...(last?.detail ? { detail: last.detail } : {}) };
    })
    .sort((a, b) => b.pullRequest.stateChangedAt.localeCompare(a.pullRequest.stateChangedAt));
}

function boardRun(run: EngineRun, record: TestRunRecord | null, prNumberOf: Map<string, number>): BoardRun {
  // Before its record exists (the start is still being carried out), the engine's heads say which PRs.
  const byNumber = (heads: EngineRun['unit']) => heads.flatMap((h) => prNumberOf.get(h.entryId) ?? []);
  const prNumbers = record ? record.testedPullRequests.map((p) => p.prNumber) : byNumber(run.unit);
  const ahead = record ? record.dependentPullRequests.map((p) => p.prNumber) : byNumber(run.ahead);
  return {
    engineRunId: run.id,
    ...(record ? { testRunId: record.id, recordStatus: record.status } : {}),
    seq: run.seq,
    status: run.status,
    isBisection: run.isBisection,
    baseSha: run.baseSha,
    ...(record?.testBranch ? { testBranch: record.testBranch } : {}),
    ...(record?.testBranchSha ? { testBranchSha: record.testBranchSha } : {}),
    startedAt: new Date(run.startedAt).toISOString(),
    pullRequests: prNumbers,
    ahead,
    checks: (record?.checkRuns ?? []).map((c) => ({ name: c.name, status: c.status, ...(c.conclusion ? { conclusion: c.conclusion } : {}), ...(c.url ? { url: c.url } : {}) })),
    failedChecks: run.failedChecks,
    ...(run.probeOf ? { probeOf: run.probeOf } : {}),
  };
}

