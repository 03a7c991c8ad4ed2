import type { PullRequestState, StateChangeReason } from '../domain/pull-request-state.js';
import type { QueueConfig, QueueMode } from '../domain/queue-config.js';
import type { RequestedQueueState } from '../domain/queue-state.js';
import type { HostMergeability } from '../domain/records.js';

/**
 * The queue engine's world: plain data, no I/O. `decide(state, event, now)`
 * turns one of these into the next, plus the actions the runner must carry out.
 * Times are milliseconds since the epoch, passed in; nothing here reads a clock.
 */

/** What the repository host says about a PR, as far as admission needs it. */
/** Config durations are in minutes; engine times are milliseconds. */
export const MINUTE_MS = 60_000;

/** What the repository host says about a PR, as far as admission needs it. */
export interface PrFacts {
  headSha: string;
  baseBranch: string;
  open: boolean;
  draft: boolean;
  mergeability: HostMergeability;
  /** False: the host says its commits cannot be rebased onto the branch (null or absent: not known). */
  rebaseable?: boolean | null;
  /** True: `not_mergeable` only until required checks of its head report (see admission). */
  checksPending?: boolean;
  /** Who opened it, when the host says: their recent outcomes in this queue inform its risk (author-risk.ts). */
  author?: string;
  /** How many files it changes, when the host says: the recent outcomes of PRs that size inform its risk (size-risk.ts). */
  changedFiles?: number;
  /** Its labels, lower-cased, when the host has them: only compared with `submittedByLabel`, never kept in the entry. */
  labels?: readonly string[];
  /** When the host was read (epoch ms): only compared with `submittedByLabel.at`, never kept in the entry. */
  readAt?: number;
}

/** Targets CI computed for one head sha; 'ALL' overlaps everything. */
export interface ImpactedTargets {
  sha: string;
  targets: readonly string[] | 'ALL';
}

/** A pull request in the queue (terminal entries leave the engine's state). */
export interface EngineEntry {
  id: string;
  prNumber: number;
  state: PullRequestState;
  priority: number;
  noBatch: boolean;
  /** FIFO key within a priority. */
  submittedAt: number;
  facts: PrFacts | null;
  targets: ImpactedTargets | null;
  /** Entries sharing a key are tested together: the halves of a bisected batch. */
  unitKey: string | null;
  /** Set when this entry's unit came from bisecting a failed batch. */
  bisection: boolean;
  /** Failed runs of its own this attempt has been tested again after (retryFailedTests); absent: none. */
  retries?: number;
  /** The last restart carried out for it, by the request's id (a comment's): the same request handled again restarts nothing. */
  restartedFor?: string;
  /**
   * Predicted probability (0..1) that this PR breaks the build: the client's
   * hint (its own CI before queueing, its size...) or, without one, the queue's
   * rate; with adaptive tuning either is moved by what its author's and its
   * size's recent outcomes here say, a hint by half as much (author-risk.ts
   * assessRisk, once per attempt); then by its runs (a failed batch's blame, a
   * pass that answered a bet). Absent: only the queue's observed break rate is known.
   */
  risk?: number;
  /** The client's hint as given; `risk` moves away from it once the records have spoken (or a run has). */
  hint?: number;
  /**
   * A run with this head in it passed (adaptive tuning): it is unlikely to break the build (only a change landed
   * since could be at odds with it), so a failure that seems its own is likelier a flake's or a PR's beside it
   * (failures.ts: retried once, and no blame from a failed batch).
   */
  vouched?: true;
  /** The head the submission was for, when its sender named one: facts read later for another head are a push (see applyFacts). */
  submittedHead?: string;
  /**
   * The label (lower-cased) whose adding submitted this attempt, and when: the first facts read since then say
   * whether the PR still has it (a label event delivered late, after the label was removed, is not read back before
   * submitting); without it, the PR leaves. Forgotten once a read confirms it: a later removal is its `unlabeled`
   * delivery's to act on, which checks who removed it.
   */
  submittedByLabel?: { label: string; at: number };
  /**
   * The host refused to build a run with it because its head was not the one the queue read (pushed to since, or the
   * host's list of its commits lags behind): no run with it starts (in a single queue, nothing behind it either; in a
   * parallel queue, nothing of its lane) until its facts are read again, which say whether it was a push. Any facts
   * applied since lift it, even for the same head (the host confirmed it); the runner reads it at once and again
   * with the waiting PRs (refresh-waiting-facts.ts), so a lost read does not hold it for good. It keeps its place.
   */
  awaitingFacts?: true;
  /** When the entry became PENDING (batch waiting counts from here). */
  admittedAt: number | null;
  /**
   * Its place in line, taken when it first joined a run. Kept when its run is
   * dropped (preempted, bisected, rebuilt), so it goes back to the same place.
   */
  place: number | null;
  /**
   * How it ends if the landing in flight that holds it does not land: a cancel, a push, a close that came while the
   * merge was being carried out. Its landing's outcome decides first (context.ts conclude).
   */
  unlessLanded?: { state: 'MERGED' | 'FAILED' | 'CANCELLED'; reason: StateChangeReason; detail?: string };
}

/**
 * Who says the host is unavailable: the runner, whose actions fail, or the App's
 * installation events, which say whether it may reach the repository. An App
 * installed again does not end failures the runner still sees; an action that
 * goes through ends both.
 */
export type HostOutageCause = 'actions' | 'access';

/** One author's recent outcomes in this queue, newest last. */
export interface AuthorOutcomes {
  author: string;
  outcomes: number[];
}

/** One PR head a run applies on top of its base, in order. */
export interface AppliedHead {
  entryId: string;
  headSha: string;
}

export type RunStatus = 'running' | 'passed' | 'failed';

/** A CI run: base + `ahead` + `unit`, deciding the entries of `unit`. */
export interface EngineRun {
  id: string;
  /** Start order; runs of one chain are ordered by it. */
  seq: number;
  baseSha: string;
  /** Heads of PRs ahead that the run includes ("dependent PRs"). */
  ahead: AppliedHead[];
  /** The PR(s) the run decides: several when batched. */
  unit: AppliedHead[];
  status: RunStatus;
  startedAt: number;
  finishedAt: number | null;
  isBisection: boolean;
  /** Checks that failed, when it failed. */
  failedChecks: string[];
  failureReason: 'failed_tests' | 'timed_out' | 'merge_conflict' | null;
  /**
   * Direct merge (`directMergeMode: always`): one PR with nothing ahead of it and no
   * other run in flight. The host may land it without a CI run when the PR's head
   * is up to date with `baseSha` and its own required checks passed (that CI run
   * tested this very content); otherwise it is tested like any run.
   */
  direct?: true;
  /** A probe (probes.ts): a part of this batch run in flight, tested ahead of its failure in an idle slot. */
  probeOf?: string;
}

/** A sha the queue produced by merging, and what it contains relative to a root. */
export interface KnownBase {
  root: string;
  heads: string[];
}

export interface EngineState {
  targetBranch: string;
  config: QueueConfig;
  requestedState: RequestedQueueState;
  /**
   * Set while a mode change waits for runs in flight to end (SWITCHING_MODES):
   * until then the queue keeps working in `config.mode`, the old mode.
   */
  switchingToMode: QueueMode | null;
  /** Head of the target branch as last seen; null until the host tells us. */
  baseSha: string | null;
  /** Shas the queue's own merges produced: lets runs built before a merge stay valid. */
  knownBases: Record<string, KnownBase>;
  entries: EngineEntry[];
  runs: EngineRun[];
  /** Probes (probes.ts): runs in idle slots that decide nothing until a failed batch adopts them; absent: none. */
  probes?: EngineRun[];
  nextRunSeq: number;
  /** The run whose merge is in flight: one merge at a time keeps the branch linear. */
  mergingRunId: string | null;
  /** Recent PR outcomes (1 = failed), newest last: sizes batches to the failure rate. */
  recentOutcomes: number[];
  /**
   * Recent outcomes of each author's PRs (1 = its own change broke: failed
   * tests or a conflict), the author concluded most recently last; bounded in
   * authors and outcomes (author-risk.ts). Absent in states saved before it.
   */
  authorOutcomes?: AuthorOutcomes[];
  /**
   * Recent outcomes (as authorOutcomes counts them) of PRs by size class, the
   * class as index (size-risk.ts). Absent in states saved before it.
   */
  sizeOutcomes?: number[][];
  /** Numbers emitted events, so each has a stable id across replays (outgoing webhooks). */
  nextEventSeq: number;
  /**
   * Set while the repository host fails (the runner retries its actions) or the
   * App has no access to the repository: nothing starts, merges or times out
   * meanwhile. `causes`: what reported it (absent in states saved before causes:
   * `actions`); see host_recovered for what ends it. States saved before it lack it.
   */
  hostOutage?: { since: number; message: string; causes?: HostOutageCause[] } | null;
  /**
   * Set when the host refused (or would refuse) to land for a reason no PR
   * caused (protection the App may not bypass, a forbidden method, an unknown
   * refusal): nothing starts or merges until an operator changes the queue (any
   * updateQueue) or the queue's own next try (landing-block.ts) goes through, so
   * nothing loops and little CI is spent on runs that cannot land. `kind`: what
   * was refused, a landing or the build of a run (absent in states saved before
   * tries, like `tries`, refused tries so far, and `retryAt`, the next);
   * `retrying` while a try is under way (runs numbered from `fromRunSeq` are its);
   * `refusedRunId`: the passed run a landing refused, built again once
   * (`rebuiltOnce`) when refused twice.
   */
  landingBlocked?: {
    since: number;
    message: string;
    kind?: 'land' | 'build';
    tries?: number;
    retryAt?: number;
    retrying?: { fromRunSeq: number };
    refusedRunId?: string;
    rebuiltOnce?: boolean;
  } | null;
  /**
   * Set when a merge found the branch elsewhere than we knew: nothing starts or
   * merges until the host reports the real head (the runner reads it), so no
   * run is rebuilt on the stale one.
   */
  awaitingBaseHead?: boolean;
  /**
   * Learned from a landing refused as untested: the branch takes only commits tested as they are (protection requiring
   * checks that the App may not bypass). A parallel queue's run then lands only on the head it was built on, so when a
   * lane lands, the runs of other lanes built on the head before are rebuilt at once rather than when they pass (each
   * would pass, be refused, and be rebuilt then: a whole CI run later). Forgotten at any updateQueue (the operator may
   * have let the App bypass the checks).
   */
  landsOnlyTested?: boolean;
  /** A branch head reported while a merge was in flight: applied once the merge's outcome is known. */
  pendingBaseSha?: string | null;
  /** The pending head came from the push of a landing (base_moved `landing`): it counts only as that merge's result. */
  pendingBaseLanding?: boolean;
  /** Heads the queue's own merges replaced, newest last: a late report of one is stale, never a move. */
  replacedBases?: string[];
  /**
   * Set when the host refused to land because the branch was not at the head the engine expected, or said the branch
   * lost commits (branch_rewound): the next head read is taken as it is, even a head in `replacedBases` (the branch
   * was reset to it by hand).
   */
  baseHeadDisputed?: boolean;
  /** When the queue last moved (a run started or finished, a PR concluded), or began waiting; absent in older states. */
  lastProgressAt?: number;
  /** Set while the queue has not moved for `stallAlertMinutes` with PRs waiting (see stall.ts). */
  stalled?: { since: number; message: string } | null;
}

/** Everything that can happen to a queue. */
export type EngineEvent =
  /** `headSha`: the head its sender submitted, when it names one (a label or command on GitHub): facts for another head are a push. */
  | {
      type: 'submitted';
      entryId: string;
      prNumber: number;
      priority: number;
      noBatch: boolean;
      facts: PrFacts | null;
      targets?: ImpactedTargets | null;
      risk?: number;
      headSha?: string;
      /** Submitted by adding this label (lower-cased): see EngineEntry.submittedByLabel. */
      label?: string;
    }
  | { type: 'priority_changed'; entryId: string; priority: number; noBatch: boolean; risk?: number }
  | { type: 'cancelled'; entryId: string }
  /** `requestId`: what asked (a comment), so that the same request handled again (a webhook delivery retried) restarts once. */
  | { type: 'restart_requested'; entryId: string; requestId?: string }
  | { type: 'impacted_targets_set'; prNumber: number; targets: ImpactedTargets }
  | { type: 'pr_facts_changed'; prNumber: number; facts: PrFacts; merged: boolean }
  | {
      type: 'run_finished';
      runId: string;
      passed: boolean;
      failedChecks?: string[];
      /** A PR whose head would not merge onto the run's content: it alone fails. */
      conflictEntryId?: string;
    }
  | { type: 'merge_finished'; runId: string; ok: true; newBaseSha: string }
  /** `onlyTested`: the host takes on the branch only commits tested as they are (see EngineState.landsOnlyTested). */
  | { type: 'merge_finished'; runId: string; ok: false; reason: 'base_moved' | 'head_changed' | 'pr_closed'; onlyTested?: true }
  /** The host refused to land this PR (GitHub's message): it alone fails, the others are rebuilt. */
  | { type: 'merge_finished'; runId: string; ok: false; reason: 'refused'; entryId: string; message: string }
  /** The host refused to land for a reason no PR caused: the queue stops merging and says why. */
  | { type: 'merge_finished'; runId: string; ok: false; reason: 'blocked'; message: string }
  /**
   * The branch is at `sha`. `landing`: a push of a commit the queue tested, which is only a hint (its webhook may be
   * late or delivered again after the branch moved on): it counts as the result of the merge in flight, and
   * otherwise, unless the base is there already, the head is read (awaitingBaseHead).
   */
  | { type: 'base_moved'; sha: string; landing?: true }
  /**
   * The branch lost commits (a force-push, such as a rollback by hand): nothing starts or lands until its head is read,
   * and that read is taken as it is, even a head the queue's own landings replaced (`replacedBases`).
   */
  | { type: 'branch_rewound' }
  /** The host would refuse to land this run whatever its tests say (protection, settings): found before testing. */
  | { type: 'landing_impossible'; runId: string; message: string }
  /**
   * The host built nothing for a run: a PR's head moved under it (`headChanged`: the run is built again once that PR's
   * facts, read again, say whether it was a push; see EngineEntry.awaitingFacts), or one PR cannot be built the
   * queue's way (`refused`: it alone fails). Neither (older logs): built again at once.
   */
  | { type: 'run_not_started'; runId: string; refused?: { entryId: string; message: string }; headChanged?: { entryId: string } }
  /** The queue's settings now (the runner decides it with what the queue record holds when it is decided). */
  | { type: 'config_changed'; config: QueueConfig; requestedState: RequestedQueueState }
  /**
   * The host failed an action (5xx, time-out, rate limit; cause `actions`, the runner retries it with back-off), or
   * the App lost access to the repository (`access`: uninstalled, suspended). Absent cause (older logs): `actions`.
   */
  | { type: 'host_unavailable'; message: string; cause?: HostOutageCause }
  /**
   * Access came back (`access`): it ends only an outage access caused. No cause: an action went through, which
   * proves both, so the outage is over whatever caused it.
   */
  | { type: 'host_recovered'; cause?: HostOutageCause }
  | { type: 'tick' };

/** Public events for outgoing webhooks (issue 5) and logs. */
export interface EmittedEvent {
  /** Unique within the queue, in emission order. */
  seq: number;
  type:
    | 'pull_request.submitted'
    | 'pull_request.queued'
    | 'pull_request.testing'
    | 'pull_request.merged'
    | 'pull_request.failed'
    | 'pull_request.canceled'
    | 'pull_request_batch.testing'
    | 'pull_request_batch.pending_failure'
    | 'queue.stalled'
    | 'queue.resumed'
    | 'pull_request_batch.merged'
    | 'pull_request_batch.failed';
  prNumbers: number[];
  runId?: string;
  reason?: StateChangeReason;
  isBisection?: boolean;
}

/** What the runner must do, in domain words. */
export type EngineAction =
  | { type: 'start_run'; run: EngineRun }
  /** `timedOut`: its results never came within the test timeout (the record says which checks were missing). */
  | { type: 'cancel_run'; runId: string; timedOut?: true }
  /** A probe (probes.ts) becomes one of the queue's runs: a failed batch was split into exactly its PRs. */
  | { type: 'adopt_run'; runId: string }
  /** Advance the target branch to the run's tested content: its unit and everything ahead. */
  | { type: 'merge'; runId: string; entryIds: string[]; expectedBaseSha: string }
  /** `runId`: the run the new state comes from, when one does (the status links it without looking it up). */
  | { type: 'publish_status'; entryId: string; prNumber: number; state: PullRequestState; reason: StateChangeReason; detail?: string; runId?: string }
  | { type: 'emit'; event: EmittedEvent }
  /** Call decide with a tick at this time (batch waits, test timeouts). */
  | { type: 'wake_at'; at: number };

export interface Decision {
  state: EngineState;
  actions: EngineAction[];
  /** The queued entries in queue order after the decision (the engine's own, already computed: a writer's places in line come from it). Shares objects with the state. */
  queued?: EngineEntry[];
}
