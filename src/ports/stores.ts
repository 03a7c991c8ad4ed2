import type { QueueConfig } from '../domain/queue-config.js';
import type { RequestedQueueState } from '../domain/queue-state.js';
import type {
  ApiTokenRecord,
  HostOutage,
  ImpactedTargetsRecord,
  PullRequestFacts,
  QueueEntryRecord,
  QueueFileSource,
  QueueRecord,
  TestRunRecord,
  TimelineEvent,
} from '../domain/records.js';
import type { PullRequestState } from '../domain/pull-request-state.js';
import type { RepoRef } from '../domain/repo.js';
import type { EngineStore } from './engine-store.js';
import type { SandboxStore } from './sandbox-store.js';
import type { DeliveryStore } from './delivery-store.js';
import type { WebhookStore } from './webhook-store.js';

/**
 * The persistence ports. Adapters (MongoDB today) implement them with plain
 * records in and out, so no driver type leaves src/adapters/.
 */

/** Outcome of inserting under a unique key: the storage-level "it already exists". */
export type InsertOutcome<T> = { ok: true; value: T } | { ok: false; reason: 'duplicate' };

export interface ApiTokenStore {
  insert(token: { tokenHash: string; prefix: string; host: string; owner: string; name: string; createdAt: Date }): Promise<ApiTokenRecord>;
  /** The live (not revoked) token with this hash. */
  findActiveByHash(tokenHash: string): Promise<ApiTokenRecord | null>;
  list(): Promise<ApiTokenRecord[]>;
  /** Returns false when no token has this id. */
  revoke(id: string, at: Date): Promise<boolean>;
}

/**
 * A dashboard sign-in session. `id` is the SHA-256 hex of the random id the
 * cookie holds (the id itself is never stored). `kind` says what the session
 * was created from; only organization API tokens today (room for GitHub sign-in).
 */
export interface SessionRecord {
  id: string;
  kind: 'api_token';
  /** The id of the token it was created from: revoking that token ends the session. */
  subject: string;
  /** That token's stored hash, to check it is still live on each use. */
  tokenHash: string;
  host: string;
  owner: string;
  /** Echoed in `x-csrf-token` by every request of the session that changes something. */
  csrfToken: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface SessionStore {
  insert(session: SessionRecord): Promise<void>;
  /** The session with this id (hash), or null when there is none or it has expired at `now` (then it is deleted). */
  find(id: string, now: Date): Promise<SessionRecord | null>;
  delete(id: string): Promise<void>;
}

export interface QueueStore {
  insert(queue: Omit<QueueRecord, 'id'>): Promise<InsertOutcome<QueueRecord>>;
  /**
   * The queue of a repository's branch. With `maxAgeMs`, a record this process
   * read at most that long ago will do (its own writes forget it at once; another
   * replica's show up within maxAgeMs): for the busiest paths, which need little of it.
   */
  find(repo: RepoRef, targetBranch: string, options?: { maxAgeMs?: number }): Promise<QueueRecord | null>;
  findById(id: string): Promise<QueueRecord | null>;
  /** All queues of an organization, optionally of one repository. */
  listForOrg(host: string, owner: string, repo?: RepoRef): Promise<QueueRecord[]>;
  update(
    id: string,
    change: { config?: QueueConfig; requestedState?: RequestedQueueState; modeSwitchStartedAt?: Date | null; hostOutage?: HostOutage | null; landingBlocked?: HostOutage | null; stalled?: HostOutage | null; configFile?: QueueFileSource | null; updatedAt: Date },
  ): Promise<QueueRecord | null>;
  /** Deletes the queue and everything kept under it (targets, runs, entries). */
  delete(id: string): Promise<void>;
  /**
   * The repository was renamed or moved to another owner on its host: the queue goes with it (its entries and runs are
   * kept by the queue's id). Duplicate when the repository's new name already has a queue for this branch.
   */
  moveToRepository(id: string, repo: RepoRef, at: Date): Promise<{ ok: true; value: QueueRecord } | { ok: false; reason: 'duplicate' | 'not_found' }>;
  /** The queues of the repository the host knows by this id, whatever name they hold. */
  listByHostRepoId(host: string, hostRepoId: string): Promise<QueueRecord[]>;
  /** Records the host's id of the queue's repository. */
  setHostRepoId(id: string, hostRepoId: string): Promise<void>;
}

export interface EntryPageQuery {
  queueId: string;
  states?: PullRequestState[];
  since?: Date;
  until?: Date;
  take: number;
  /** Continue after this (submittedAt, id), newest first. */
  after?: { submittedAt: Date; id: string };
}

export interface QueueEntryStore {
  /**
   * A new entry written whole at once (fixtures and imports: a submit `claim`s its PR and the runner writes the
   * entry). `findable` settles once `find` by PR finds it from any replica (this process's finds wait for it already).
   */
  insert(entry: Omit<QueueEntryRecord, 'id'>): Promise<{ ok: true; value: QueueEntryRecord; findable: Promise<void> } | { ok: false; reason: 'duplicate' }>;
  /**
   * A submission of a PR without an entry: claims the PR's key, holding the entry's first record, and answers
   * the entry it stands for. The entry is written by the runner, its one writer, in the decision that takes the
   * submission in (`recordTransitions`' `firsts`); until then `find` answers it as submitted. `duplicate`: the PR
   * has an entry, or a submission of it waits for its decision.
   */
  claim(entry: Omit<QueueEntryRecord, 'id'>): Promise<{ ok: true; value: QueueEntryRecord } | { ok: false; reason: 'duplicate' }>;
  find(queueId: string, prNumber: number): Promise<QueueEntryRecord | null>;
  findById(id: string): Promise<QueueEntryRecord | null>;
  /*
   * The runner's narrow writes (it alone writes entry state). Each carries a key
   * that grows with every decision: a write whose key is not newer than the
   * entry's last one is a replay and changes nothing.
   */
  /** A state change with its timeline record; nothing when the entry is in that state already, or ended. */
  recordTransition(entryId: string, event: TimelineEvent, key: number): Promise<void>;
  /**
   * Several state changes at once, each as `recordTransition` would record it (one entry's in their order): one write
   * for all. `firsts`: claimed submissions the decision takes in, written whole with their changes and the priority
   * and noBatch given (an entry written already gets only those). A change naming its PR (`claim`) to an entry not
   * written yet writes it from its claim too (a submission decided by a writer that did not write it: an older
   * release during a rolling upgrade).
   */
  recordTransitions(
    changes: Array<{ entryId: string; event: TimelineEvent; key: number; claim?: { queueId: string; prNumber: number } }>,
    firsts?: Array<{ entryId: string; queueId: string; prNumber: number; priority?: number; noBatch?: boolean }>,
  ): Promise<void>;
  /** A new attempt of an ended entry: back to NOT_READY at the end of its priority class. */
  recordResubmission(entryId: string, change: { attempt: number; priority: number; noBatch: boolean; at: Date }, key: number): Promise<void>;
  /** A timeline record without a state change (e.g. a restart of its tests). */
  appendTimeline(entryId: string, event: TimelineEvent, key: number): Promise<void>;
  recordPriority(entryId: string, priority: number, noBatch: boolean): Promise<void>;
  /**
   * The entry as this process last wrote it whole (its insert, or a state its runner
   * recorded), without a read; null when it did not lately. Current only for a caller
   * that knows nobody else wrote it since: right after this process's runner recorded
   * the decision the caller waited for (the runner is the only writer of entry state).
   */
  lastWritten(entryId: string): QueueEntryRecord | null;
  /**
   * Forgets this process's copies of a queue's entries. The runner calls it when it becomes the queue's
   * writer: another replica's runner may have written them meanwhile, and its own writes extend these copies.
   */
  forgetWritten(queueId: string): void;
  /** The host's facts about the PR, as last read. */
  setFacts(entryId: string, facts: PullRequestFacts): Promise<void>;
  /** Entries still in the queue, in queue order (priority, then FIFO), without their timelines (views of the whole queue). */
  listEnqueued(queueId: string): Promise<QueueEntryRecord[]>;
  countEnqueued(queueId: string): Promise<number>;
  /**
   * The PRs whose submission claimed its key and is not decided yet (no entry written): a queue deleted now would
   * answer them 200 and lose them. Reads the queue's keys (every PR it ever held): for rare questions only.
   */
  undecidedSubmissions(queueId: string): Promise<number[]>;
  countInStates(queueId: string, states: readonly PullRequestState[]): Promise<number>;
  page(query: EntryPageQuery): Promise<QueueEntryRecord[]>;
  /** Entries with any state change since `since`: every timeline event in that window is theirs. */
  listChangedSince(queueId: string, since: Date): Promise<QueueEntryRecord[]>;
}

export interface ImpactedTargetsStore {
  set(record: ImpactedTargetsRecord): Promise<void>;
  /** The latest upload for that head sha, or for any sha when none is given. */
  latest(queueId: string, prNumber: number, sha?: string): Promise<ImpactedTargetsRecord | null>;
  /**
   * For views of many PRs at once: for each (PR, head sha or none), the upload
   * `latest` would answer, in a bounded number of queries whatever the count.
   */
  latestForMany(queueId: string, wanted: Array<{ prNumber: number; sha?: string }>): Promise<Map<number, ImpactedTargetsRecord>>;
  /** Whether an upload exists, without loading a possibly huge list. */
  summary(queueId: string, prNumber: number, sha?: string): Promise<{ sha: string; all: boolean; count: number } | null>;
}

/** What the runner changes on a test run as it progresses. */
export type TestRunChange = Partial<
  Pick<TestRunRecord, 'status' | 'finishedAt' | 'testBranch' | 'testBranchSha' | 'checkRuns' | 'statusChecks' | 'failureStatuses' | 'requiredStatuses' | 'requiredStatusesSource' | 'requiredCheckApps' | 'landedWithoutCi' | 'probeOf'>
>;

export interface TestRunStore {
  /** Inserting a run the engine already has a record for answers that record (a replayed start). */
  insert(run: Omit<TestRunRecord, 'id'>): Promise<TestRunRecord>;
  /** The run the engine calls `engineRunId` in this queue. */
  findByEngineRunId(queueId: string, engineRunId: string): Promise<TestRunRecord | null>;
  update(id: string, change: TestRunChange): Promise<void>;
  findById(queueId: string, id: string): Promise<TestRunRecord | null>;
  /** A probe its failed batch adopted: a run like any other from now on, the latest of each PR it tests. */
  adoptProbe(id: string): Promise<void>;
  /** The newest run that tested this PR (a probe not adopted is none: it decides nothing). */
  latestForPr(queueId: string, prNumber: number): Promise<TestRunRecord | null>;
  countInProgress(queueId: string): Promise<number>;
  /**
   * The run in progress whose test branch is at this sha (check results arrive by sha). Asked for every check
   * result, mostly of PR heads that no run tested: a miss must stay cheap however many runs are stored.
   */
  findInProgressByTestBranchSha(testBranchSha: string): Promise<TestRunRecord | null>;
  /** The queue's run that finished last (passed, failed or cancelled), or null. */
  latestFinished(queueId: string): Promise<TestRunRecord | null>;
  /** Whether one of the queue's runs tested this commit (a branch head the queue's own landing produced); asked for every push to the target branch. */
  testedCommit(queueId: string, sha: string): Promise<boolean>;
  /** Every run in progress, for the periodic reconcile of check results. */
  listInProgress(): Promise<TestRunRecord[]>;
  /** The queue's runs on this base whose tested commit is built and still in play (testing or passed). */
  listBuiltOn(queueId: string, baseSha: string): Promise<TestRunRecord[]>;
  listFinishedSince(queueId: string, since: Date): Promise<TestRunRecord[]>;
  /** Housekeeping, run now and then: forgets what the store keeps for quick reads of runs finished long before `now`. */
  prune(now: Date): Promise<void>;
}

/** Everything the application needs from persistence. */
export interface Stores {
  tokens: ApiTokenStore;
  queues: QueueStore;
  entries: QueueEntryStore;
  impactedTargets: ImpactedTargetsStore;
  testRuns: TestRunStore;
  engine: EngineStore;
  sandbox: SandboxStore;
  deliveries: DeliveryStore;
  /** Outgoing webhooks: subscriptions, outbox, attempt claims. */
  webhooks: WebhookStore;
  /** Dashboard sign-in sessions. */
  sessions: SessionStore;
  /** Whether the database answers (readiness). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
