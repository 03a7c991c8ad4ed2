import { DEFAULT_STALL_ALERT_MINUTES } from '../domain/queue-config.js';
import { priorityNameOf, skipsTheLine } from '../domain/priority.js';
import { isTerminal } from '../domain/pull-request-state.js';
import { shownQueueState } from '../domain/queue-state.js';
import { TIMED_OUT_PREFIX, type ImpactedTargetsRecord, type QueueEntryRecord, type QueueRecord, type TestRunRecord } from '../domain/records.js';
import type { Stores } from '../ports/stores.js';
import type { EnqueuedEntriesCache } from './enqueued-cache.js';
import type { PullRequestView } from '../api/schemas/pull-request.js';
import type { QueueView } from '../api/schemas/queue.js';
import { notReadyReason } from '../engine/admission.js';
import { engineFacts } from '../runner/engine-inputs.js';

/**
 * Views are derived from stored facts on every read: readiness, the shown queue
 * state and the PR's targets for its current head are never stored twice.
 */
export async function pullRequestView(
  stores: Stores,
  queue: QueueRecord,
  entry: QueueEntryRecord,
  options: { includeTimeline?: boolean; targets?: ImpactedTargetsRecord | null } = {},
): Promise<PullRequestView> {
  const targets = options.targets !== undefined ? options.targets : await shownTargets(stores, queue, entry);
  return viewOf(queue, entry, targets, options);
}

/** The targets a PR's view counts: those uploaded for the head sha the host reported; without a host, the latest upload. */
export function shownTargets(stores: Stores, queue: QueueRecord, entry: QueueEntryRecord): Promise<ImpactedTargetsRecord | null> {
  return stores.impactedTargets.latest(queue.id, entry.prNumber, entry.facts?.headSha);
}

/** Views of many PRs of one queue, in a bounded number of queries whatever their number. */
export async function pullRequestViews(stores: Stores, queue: QueueRecord, entries: QueueEntryRecord[]): Promise<PullRequestView[]> {
  const targets = await stores.impactedTargets.latestForMany(
    queue.id,
    entries.map((e) => ({ prNumber: e.prNumber, ...(e.facts?.headSha ? { sha: e.facts.headSha } : {}) })),
  );
  return entries.map((entry) => viewOf(queue, entry, targets.get(entry.prNumber) ?? null));
}

function viewOf(queue: QueueRecord, entry: QueueEntryRecord, targets: ImpactedTargetsRecord | null, options: { includeTimeline?: boolean } = {}): PullRequestView {
  const facts = entry.facts;
  const priorityName = priorityNameOf(entry.priority);
  const view: PullRequestView = {
    id: entry.id,
    state: entry.state,
    readiness: {
      hasImpactedTargets: targets !== null,
      requiresImpactedTargets: queue.config.mode === 'parallel',
      doesBaseBranchMatch: facts !== null && facts.baseBranch === queue.targetBranch,
      gitHubMergeability: facts?.mergeability ?? 'unspecified',
    },
    stateChangedAt: entry.stateChangedAt.toISOString(),
    submittedAt: entry.submittedAt.toISOString(),
    priorityValue: entry.priority,
    skipTheLine: skipsTheLine(entry.priority),
    isCurrentlySubmittedToQueue: !isTerminal(entry.state),
    noBatch: entry.noBatch,
    prNumber: entry.prNumber,
  };
  if (priorityName) view.priorityName = priorityName;
  if (entry.state === 'NOT_READY') {
    const reason = notReadyReason({ targetBranch: queue.targetBranch, mode: queue.config.mode, mergeMethod: queue.config.mergeMethod, facts: engineFacts(facts), targetsSha: targets?.sha ?? null });
    // Null here means "ready now, about to be admitted".
    if (reason) view.notReadyReason = reason;
  }
  if (facts) {
    view.prTitle = facts.title;
    view.prSha = facts.headSha;
    view.prBaseBranch = facts.baseBranch;
    view.prAuthor = facts.author;
  }
  if (targets) view.impactedTargets = targets.targets;
  const waiting = !isTerminal(entry.state) ? waitingReason(queue) : null;
  if (waiting) view.waitingReason = waiting;
  if (options.includeTimeline) {
    view.timeline = [...entry.timeline].reverse().map((event) => ({
      timestamp: event.at.toISOString(),
      state: event.state,
      reason: event.reason,
      ...(event.detail ? { detail: event.detail } : {}),
    }));
  }
  return view;
}

export async function queueView(stores: Stores, queue: QueueRecord, cache?: EnqueuedEntriesCache): Promise<QueueView> {
  const [enqueued, lastRun] = await Promise.all([
    cache ? cache.enqueuedWithTargets(stores, queue.id) : stores.entries.listEnqueued(queue.id).then((entries) => ({ entries, targets: null })),
    stores.testRuns.latestFinished(queue.id),
  ]);
  const enqueuedPullRequests = enqueued.targets
    ? enqueued.entries.map((entry) => viewOf(queue, entry, enqueued.targets.get(entry.prNumber) ?? null))
    : await pullRequestViews(stores, queue, enqueued.entries);
  return {
    id: queue.id,
    repo: queue.repo,
    targetBranch: queue.targetBranch,
    branch: queue.targetBranch,
    state: shownQueueState(queue.requestedState, queue.modeSwitchStartedAt),
    ...queue.config,
    stallAlertMinutes: queue.config.stallAlertMinutes ?? DEFAULT_STALL_ALERT_MINUTES,
    retryFailedTests: queue.config.retryFailedTests ?? 0,
    labelingBots: queue.config.labelingBots ?? [],
    tuning: queue.config.tuning ?? 'fixed',
    configuredBy: queue.configFile ? { file: queue.configFile.path, commitSha: queue.configFile.commitSha, appliedAt: queue.configFile.appliedAt.toISOString() } : 'api',
    createdAt: queue.createdAt.toISOString(),
    updatedAt: queue.updatedAt.toISOString(),
    problems: problemsOf(queue, lastRun),
    enqueuedPullRequests,
  };
}

/** What keeps the queue from moving that is no PR's fault. */
export function problemsOf(queue: QueueRecord, lastRun: TestRunRecord | null): QueueView['problems'] {
  const problems: QueueView['problems'] = [];
  if (queue.hostOutage) problems.push({ kind: 'host_unavailable', since: queue.hostOutage.since.toISOString(), message: queue.hostOutage.message });
  const blocked = queue.landingBlocked;
  if (blocked) problems.push({ kind: 'landing_blocked', since: blocked.since.toISOString(), message: blocked.message, ...(blocked.nextTryAt ? { nextTryAt: blocked.nextTryAt.toISOString() } : {}) });
  if (queue.stalled) problems.push({ kind: 'queue_stalled', since: queue.stalled.since.toISOString(), message: `${queue.stalled.message} The other problems listed, if any, say why; otherwise look at the runs in flight and their CI.` });
  // The last run ended with no result from its required checks: usually CI that does not run on test branches.
  const silent = lastRun?.status === 'failed' ? lastRun.failureStatuses.filter((s) => s.startsWith(TIMED_OUT_PREFIX)).map((s) => s.slice(TIMED_OUT_PREFIX.length)) : [];
  if (lastRun?.finishedAt && silent.length > 0) {
    problems.push({
      kind: 'checks_never_reported',
      since: lastRun.finishedAt.toISOString(),
      message: `The last test run (${lastRun.testBranch}) got no result in time from its required checks ${silent.map((n) => `"${n}"`).join(', ')}. If CI does not run on pushes to mq/** branches, no run can pass: see "Set up your CI" in the README.`,
    });
  }
  return problems;
}

/** A queue-wide reason to wait that is no PR's fault. */
function waitingReason(queue: QueueRecord): string | null {
  const outage = queue.hostOutage;
  if (outage) return `The repository host has been failing since ${outage.since.toISOString()} (${outage.message}); the queue retries with back-off and every PR keeps its place.`;
  const blocked = queue.landingBlocked;
  if (blocked) return `The queue stopped landing at ${blocked.since.toISOString()}: ${blocked.message} Every PR keeps its place.`;
  return null;
}
