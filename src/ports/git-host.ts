import type { PullRequestFacts, RequiredCheckApp } from '../domain/records.js';
import type { MergeMethod } from '../domain/queue-config.js';
import type { PullRequestState, StateChangeReason } from '../domain/pull-request-state.js';
import type { RepoRef } from '../domain/repo.js';

/** A PR head a test run applies, in order. */
export interface TestedHead {
  prNumber: number;
  headSha: string;
  /** The PR's title and description, for the commit messages of what lands. */
  title?: string;
  body?: string;
}

/** What to build and test: the base plus these heads, in this order. */
export interface TestRunRequest {
  /** Opaque to the host; reported back with the run's results. */
  queueId: string;
  repo: RepoRef;
  targetBranch: string;
  runId: string;
  baseSha: string;
  heads: TestedHead[];
  /** The queue's override; absent: the host finds the branch's required checks. */
  requiredStatuses?: string[];
  /** Also open a draft PR for the test branch (CI systems that only run on PRs). */
  createPullRequest?: boolean;
  /** How the run's PRs will land: the test branch holds the very commits that will. */
  mergeMethod: MergeMethod;
  /**
   * An earlier run's tested commit that is base + the first `heads` of these
   * heads: building on it keeps a chain of runs one line of history, so each
   * run's commit fast-forwards from the one before it once that one lands.
   */
  buildOn?: { sha: string; heads: number };
  /**
   * Direct merge allowed (one PR, nothing ahead): when its head is up to date
   * with `baseSha` and its own required checks passed, the host builds what will
   * land but starts no CI (answering `withoutCi`); otherwise a normal run.
   */
  direct?: boolean;
}

/** Where the host built a run: CI results arrive later as events. */
export type TestRunStarted =
  | {
      ok: true;
      testBranch: string;
      testBranchSha: string | null;
      /** The checks that decide the run, and where that list came from. */
      requiredStatuses?: string[];
      requiredStatusesSource?: 'queue' | 'branch_protection' | 'ruleset';
      /** Those the branch's policy binds to one App. */
      requiredCheckApps?: RequiredCheckApp[];
      /** Direct merge: no CI was started; the PR's own checks on this very content are the verdict. */
      withoutCi?: { reason: string; checkRuns: CheckResult[] };
    }
  /** The PR whose head does not apply on top of what is before it. */
  | { ok: false; reason: 'merge_conflict'; prNumber: number }
  /** Nothing says which checks must pass: the queue never merges on zero checks (no PR's fault: landing stops). */
  | { ok: false; reason: 'no_required_statuses'; message: string }
  /** The host would refuse to land it whatever the tests say (protection, settings): no CI is spent. */
  | { ok: false; reason: 'cannot_land'; message: string }
  /** The PR's head is not the one the queue was to test (pushed to meanwhile): nothing was built; its facts are read again. */
  | { ok: false; reason: 'head_changed'; prNumber: number }
  /** This PR cannot be built the queue's way (more commits than the host lists, say): it alone fails, with why. */
  | { ok: false; reason: 'pr_unbuildable'; prNumber: number; message: string };

export interface MergeRequest {
  repo: RepoRef;
  targetBranch: string;
  runId: string;
  /** The branch must still be here, or the merge is refused (it moved outside the queue). */
  expectedBaseSha: string;
  heads: TestedHead[];
  mergeMethod: MergeMethod;
  /** Carried out again after a transient failure: an earlier attempt may have landed it, and said so on its PRs. */
  askedAgain?: boolean;
  /** When the run started: what an earlier attempt said on its PRs is newer, so only that much of their comments is read. */
  runStartedAt?: Date;
}

export type MergeOutcome =
  | { ok: true; newBaseSha: string }
  /**
   * Nothing landed: the branch moved, or a PR changed or closed since it was tested (the queue rebuilds).
   * `onlyTested`: the branch moved and the host would not take the run's PRs put together on it untested (protection
   * requiring checks on every commit it takes), so a run lands only on the very head it was built on.
   */
  | { ok: false; reason: 'base_moved' | 'head_changed' | 'pr_closed'; onlyTested?: true }
  /** Nothing landed: the host will not land this PR (its message says why); it alone fails. */
  | { ok: false; reason: 'refused'; prNumber: number; message: string }
  /** Nothing landed, for a reason no PR caused (protection, permissions): the queue stops merging and says why. */
  | { ok: false; reason: 'blocked'; message: string };

/**
 * A repository host (the sandbox, GitHub): where PR facts come from, where test
 * runs are built and where PRs are merged. Every call is safe to repeat with the
 * same arguments (the runner replays actions after a restart). Adapters live in
 * src/adapters/; the rest of the code knows only this port.
 */
export interface GitHost {
  /**
   * True when this host's reads are answered from this service's own database
   * (the sandbox): a request may read PR facts inline. Remote hosts (GitHub)
   * are read by the runner in the background, never inside a request.
   */
  readonly answersLocally?: boolean;
  /** The PR as the host sees it now, or null when the host has no such PR. */
  readPullRequest(repo: RepoRef, prNumber: number): Promise<PullRequestFacts | null>;
  /** The sha a branch points to, or null when it does not exist. */
  readBranchHead(repo: RepoRef, branch: string): Promise<string | null>;
  startTestRun(request: TestRunRequest): Promise<TestRunStarted>;
  cancelTestRun(repo: RepoRef, runId: string): Promise<void>;
  merge(request: MergeRequest): Promise<MergeOutcome>;
  /** Shows the PR's queue state where its author looks (idempotent per state). */
  reportPullRequestStatus(update: PullRequestStatusUpdate): Promise<void>;
}

/** What the PR's author sees of the queue: GitHub shows it as a check run and comments. */
export interface PullRequestStatusUpdate {
  repo: RepoRef;
  targetBranch: string;
  prNumber: number;
  headSha: string;
  state: PullRequestState;
  reason: StateChangeReason;
  detail?: string;
  /** 1-based place among the queue's PRs, while it waits or tests. */
  position?: number;
  /** When it is forecast to merge, while it waits or tests (absent: no forecast, e.g. a paused queue). */
  estimatedMergeAt?: Date;
  /** The run that decided it, for links and failing checks. */
  testRun?: { runId: string; testBranch: string; failedChecks: string[] };
  statusCheckEnabled: boolean;
  commentsEnabled: boolean;
}

/** A check's result on a test run, as the host reports it. */
export interface CheckResult {
  name: string;
  url?: string;
  status: string;
  conclusion?: string;
}

/**
 * What hosts tell the queue on their own initiative (CI finished, a PR or a
 * branch changed): the sandbox calls it directly, GitHub through webhooks.
 */
export interface HostEvents {
  testRunFinished(report: { queueId: string; runId: string; passed: boolean; checkRuns: CheckResult[]; failedChecks: string[] }): Promise<void>;
  pullRequestChanged(repo: RepoRef, prNumber: number): Promise<void>;
  /** `rewound`: the branch lost commits (a force-push, e.g. a rollback), which no landing of the queue's does. */
  branchMoved(repo: RepoRef, branch: string, sha: string, options?: { rewound?: boolean }): Promise<void>;
  /** The host can no longer be used for this queue (the App was uninstalled or suspended), or can again. */
  hostAccess(queueId: string, change: { available: false; message: string } | { available: true }): Promise<void>;
}

/** Picks the adapter for a `repo.host`; undefined when none is configured for it. */
export interface GitHostRegistry {
  forHost(host: string): GitHost | undefined;
}

/** A registry of the adapters configured at start-up, keyed by lower-cased host name. */
export function gitHostRegistry(hosts: Record<string, GitHost> = {}): GitHostRegistry {
  const byName = new Map(Object.entries(hosts).map(([name, host]) => [name.toLowerCase(), host]));
  return { forHost: (host) => byName.get(host.toLowerCase()) };
}
