import type { CheckResult } from '../ports/git-host.js';
import type { StateChangeReason } from '../domain/pull-request-state.js';
import type { PullRequestFacts } from '../domain/records.js';
import type { EngineAction, EngineEvent } from '../engine/model.js';

/**
 * What the runner's inbox holds: the engine's events, plus intents whose record
 * the runner must also write (it is the only writer of entry and run state).
 * Handlers put these in the inbox and answer; the runner does the rest.
 */
export type RunnerInput =
  | EngineEvent
  /** A PR that ended submitted again: a new attempt of the same entry. */
  | { type: 'resubmitted'; attempt: number; submitted: Extract<EngineEvent, { type: 'submitted' }> }
  /** Cancel, also for an entry the engine does not hold (it still ends CANCELLED). */
  | { type: 'cancel_requested'; entryId: string; prNumber: number }
  /** The host says a PR changed: its facts are read again, off the request path. */
  | { type: 'refresh_pull_request'; prNumber: number }
  /**
   * What a read of the PR found: stored by the record step, in the decision that
   * applies it (a write of its own, beside the record step's, could be lost: the
   * local FerretDB updates a document by reading and rewriting it whole).
   */
  | { type: 'pr_facts_read'; entryId: string; facts: PullRequestFacts; event: Extract<EngineEvent, { type: 'pr_facts_changed' }> }
  /**
   * The host says the target branch moved (a push webhook): its head is read
   * again rather than taken from the message, as webhooks arrive late and out
   * of order, and the queue's own merges announce themselves this way too.
   */
  | { type: 'base_head_changed'; rewound?: true }
  /** A host finished a test run: the run record gets its results, the engine its verdict. */
  | { type: 'test_run_reported'; testRunId: string; engineRunId: string; passed: boolean; checkRuns: CheckResult[]; failedChecks: string[] };

/** The submission an input carries (a first one, or a new attempt's), if any. */
export function submissionOf(input: RunnerInput): Extract<EngineEvent, { type: 'submitted' }> | null {
  return input.type === 'submitted' ? input : input.type === 'resubmitted' ? input.submitted : null;
}

/**
 * A round's inputs in the order they are decided: a cancel of an entry the engine does not hold (`held`: before the
 * round) goes after the entry's submission in the round, the one it can only have been sent for (a cancel of an
 * entry that ended is sent only when a submission of it waits). Inputs from several replicas do not arrive in the
 * order they were sent (the inbox orders by id, whose part within a second is per process; a handed input goes after
 * the inbox's): a cancel decided before the submission it answered ended an entry the engine then held and tested, and
 * the PR was queued after the cancel's 200. A cancel of a held entry keeps its place: a submission after it may be
 * a later request, sent once the cancel was answered.
 */
export function cancelsAfterSubmissions<T extends { input: RunnerInput }>(items: T[], held: (entryId: string) => boolean): T[] {
  const lastSubmission = new Map<string, number>();
  items.forEach((item, index) => {
    const submission = submissionOf(item.input);
    if (submission && !held(submission.entryId)) lastSubmission.set(submission.entryId, index);
  });
  const movedAfter = new Map<number, T[]>();
  const ordered: T[] = [];
  items.forEach((item, index) => {
    const last = item.input.type === 'cancel_requested' ? lastSubmission.get(item.input.entryId) : undefined;
    if (last !== undefined && last > index) movedAfter.set(last, [...(movedAfter.get(last) ?? []), item]);
    else ordered.push(item, ...(movedAfter.get(index) ?? []));
  });
  return ordered;
}

/** An inbox entry: one input, when it happened, and its id (for acknowledging it). */
export interface InboxItem {
  id: string;
  queueId: string;
  input: RunnerInput;
  /** When it happened; decide() is given this time. */
  at: number;
  /** Handed to the writer directly, never in the inbox (its decision in the log is its only record). */
  handed?: true;
}

/**
 * A decision this replica's runner recorded: the queue's `recordedThrough` cursor moved `from` → `to`, the entries
 * it wrote, and the PRs whose impacted targets it was told of (an upload stored before the decision).
 */
export interface RecordedChange {
  queueId: string;
  from: number;
  to: number;
  entryIds: string[];
  targetsOf: number[];
}

/** Effects on the runner's own records that come with an intent rather than from the engine. */
export type RecordAction =
  /**
   * A submission the engine takes in: its entry written whole from the claim its request made (see
   * QueueEntryStore.claim), with the priority and noBatch it was decided with.
   */
  | { type: 'record_entry'; entryId: string; prNumber: number; priority: number; noBatch: boolean }
  | { type: 'record_resubmission'; entryId: string; attempt: number; priority: number; noBatch: boolean; at: number }
  | { type: 'record_priority'; entryId: string; priority: number; noBatch: boolean }
  /** A timeline record in the entry's current state (e.g. a restart of its tests). */
  | { type: 'record_timeline'; entryId: string; reason: StateChangeReason; at: number }
  | { type: 'record_test_result'; testRunId: string; passed: boolean; checkRuns: CheckResult[]; failedChecks: string[]; at: number }
  | { type: 'record_facts'; entryId: string; facts: PullRequestFacts };

/** Host reads the runner does in the background for the engine. */
export type HostReadAction = { type: 'refresh_pull_request'; prNumber: number } | { type: 'read_base_head' };

export type RunnerAction = EngineAction | RecordAction | HostReadAction;

/** The part of an input the engine decides on (null: runner-only). */
export function engineEventOf(input: RunnerInput): EngineEvent | null {
  switch (input.type) {
    case 'resubmitted':
      return input.submitted;
    case 'cancel_requested':
      return { type: 'cancelled', entryId: input.entryId };
    case 'refresh_pull_request':
      return null;
    case 'base_head_changed':
      // A push that took commits off the branch: the head read next is believed even if the queue replaced it once.
      return input.rewound ? { type: 'branch_rewound' } : null;
    case 'test_run_reported':
      return { type: 'run_finished', runId: input.engineRunId, passed: input.passed, failedChecks: input.failedChecks };
    case 'pr_facts_read':
      return input.event;
    default:
      return input;
  }
}
