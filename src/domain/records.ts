import type { PullRequestState, StateChangeReason } from './pull-request-state.js';
import type { QueueConfig } from './queue-config.js';
import type { RequestedQueueState } from './queue-state.js';
import type { RepoRef } from './repo.js';

/** A merge queue: one repository's one target branch, its settings and its state. */
export interface QueueRecord {
  id: string;
  repo: RepoRef;
  targetBranch: string;
  config: QueueConfig;
  requestedState: RequestedQueueState;
  /** Set while a mode change waits for in-flight runs to end. */
  modeSwitchStartedAt: Date | null;
  /** Set while the repository host fails and the queue's actions wait for it (written by the runner). */
  hostOutage?: HostOutage | null;
  /** Set while the host refuses to land passed runs for a reason no PR caused; an operator's updateQueue lifts it. */
  landingBlocked?: HostOutage | null;
  /** Set while the queue has not moved for its stallAlertMinutes with PRs waiting (written by the runner). */
  stalled?: HostOutage | null;
  /** Set while the repository's queue file configures this queue: the file wins over updateQueue. */
  configFile?: QueueFileSource | null;
  /** The host's own id of the repository (GitHub's `repository.id`), learnt from its webhooks: it stays when the name changes. */
  hostRepoId?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The committed file a queue's settings came from. */
export interface QueueFileSource {
  path: string;
  commitSha: string;
  appliedAt: Date;
}

/** The repository host failing (5xx, time-outs, rate limits): since when, and its last words. */
export interface HostOutage {
  since: Date;
  message: string;
  /** A blocked landing's next try of the queue's own (engine/landing-block.ts); absent while a try is under way. */
  nextTryAt?: Date;
}

/** What the repository host says about the host's mergeability check of a PR. */
export const HOST_MERGEABILITIES = ['unspecified', 'in_progress', 'mergeable', 'not_mergeable'] as const;
export type HostMergeability = (typeof HOST_MERGEABILITIES)[number];

/** Facts about a pull request as last read from its repository host. */
export interface PullRequestFacts {
  title: string;
  author: string;
  headSha: string;
  baseBranch: string;
  open: boolean;
  draft: boolean;
  merged: boolean;
  mergeability: HostMergeability;
  /** False when the host says its commits cannot be rebased onto its base; absent when unknown. */
  rebaseable?: boolean;
  /**
   * True when the host refuses the merge (`not_mergeable`) only until required checks of the head
   * report: they are running or not started. Absent otherwise.
   */
  checksPending?: boolean;
  /** How many files the PR changes, when the host says (GitHub's `changed_files`): informs its risk. */
  changedFiles?: number;
  /** Its labels' names, lower-cased, when the host has labels (GitHub): a PR queued by its label leaves when it is gone. */
  labels?: string[];
  url?: string;
  body?: string;
  readAt: Date;
}

/** One state change of an entry, kept forever as its history. */
export interface TimelineEvent {
  at: Date;
  state: PullRequestState;
  reason: StateChangeReason;
  /** Free text for humans, e.g. the failing check's name. */
  detail?: string;
}

/** One pull request in one queue. Re-submission starts a new attempt of the same entry. */
export interface QueueEntryRecord {
  id: string;
  queueId: string;
  prNumber: number;
  attempt: number;
  state: PullRequestState;
  priority: number;
  noBatch: boolean;
  /** When the current attempt was submitted: the FIFO key within a priority. */
  submittedAt: Date;
  stateChangedAt: Date;
  /** When the current attempt reached MERGED, FAILED or CANCELLED. */
  concludedAt: Date | null;
  /** Absent until a repository host has answered for this PR. */
  facts: PullRequestFacts | null;
  timeline: TimelineEvent[];
  /** Orders the runner's writes to this entry (decision version and index): a replayed write is not newer. */
  recordedKey?: number;
}

/** Impacted targets as uploaded by CI for one head sha of a PR. */
export interface ImpactedTargetsRecord {
  queueId: string;
  prNumber: number;
  sha: string;
  targets: string[] | 'ALL';
  setAt: Date;
}

export const TEST_RUN_STATUSES = ['in_progress', 'succeeded', 'failed', 'cancelled'] as const;
export type TestRunStatus = (typeof TEST_RUN_STATUSES)[number];

/** A check run on the test branch, as the host reports it. */
export interface CheckRunResult {
  name: string;
  url?: string;
  status: string;
  conclusion?: string;
}

/** A commit status on the test branch. */
export interface StatusCheckResult {
  context: string;
  url?: string;
  state: string;
}

/** A PR whose head a test run includes, in the order it was applied. */
export interface TestedPullRequest {
  entryId: string;
  prNumber: number;
  headSha: string;
  title?: string;
  url?: string;
}

/** How a timed-out run's record names each required check that had not reported (`failureStatuses`). */
export const TIMED_OUT_PREFIX = 'no result in time: ';

/** A required check bound to one App (GitHub's `app_id` / `integration_id`). */
export interface RequiredCheckApp {
  name: string;
  appId: number;
}

/** One CI run of the base plus an ordered list of PRs, on a test branch. */
export interface TestRunRecord {
  id: string;
  queueId: string;
  /** The engine's name for the run, when the queue runner started it. */
  engineRunId?: string | null;
  status: TestRunStatus;
  baseSha: string;
  testBranch: string;
  testBranchSha: string | null;
  /** The PR(s) this run decides (several when batched). */
  testedPullRequests: TestedPullRequest[];
  /** PRs ahead whose changes the run includes. */
  dependentPullRequests: TestedPullRequest[];
  isBisection: boolean;
  requiredStatuses: string[];
  requiredStatusesSource: 'queue' | 'branch_protection' | 'ruleset' | 'none';
  /** Required checks the branch's policy binds to one GitHub App: only that App's result counts (absent: none). */
  requiredCheckApps?: RequiredCheckApp[];
  checkRuns: CheckRunResult[];
  statusChecks: StatusCheckResult[];
  failureStatuses: string[];
  impactedTargets: string[] | 'ALL' | null;
  /** Set when the run landed without a CI run of its own (direct merge): why that was safe. */
  landedWithoutCi?: string | null;
  /**
   * A probe (engine/probes.ts): a part of the batch run named here, tested in an idle CI slot ahead of that batch's
   * failure. It decides nothing, so it is no PR's latest run, until the failed batch adopts it (then null).
   */
  probeOf?: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** An organization API token. Only the hash of the secret is ever stored. */
export interface ApiTokenRecord {
  id: string;
  host: string;
  owner: string;
  name: string;
  /** The first characters of the token, to recognise it in listings. */
  prefix: string;
  createdAt: Date;
  revokedAt: Date | null;
}
