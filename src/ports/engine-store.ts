import type { EngineState } from '../engine/model.js';
import type { InboxItem, RunnerAction } from '../runner/runner-model.js';

/**
 * A queue's engine state is stored as a snapshot plus an append-only log of
 * decisions: each log entry holds the events one pump applied and the actions
 * it decided. The state is the snapshot with the log's events replayed through
 * decide() (deterministic), so a decision writes its events and actions, never
 * the whole queue. Snapshots are taken now and then to keep replays short.
 */
export interface StoredDecision {
  queueId: string;
  /** 1, 2, 3…: appending version N succeeds for one writer only (a unique key). */
  version: number;
  /** Lease epoch of the writer (diagnosis). */
  epoch: number;
  /** What was applied, in order, with the inbox ids they came from. */
  items: InboxItem[];
  actions: RunnerAction[];
  /** The items were decided together (decideAllInPlace); absent in decisions stored before, decided one by one. */
  together?: true;
}

export interface StoredSnapshot {
  version: number;
  state: EngineState;
}

/** How far the runner has carried out a queue's decisions. */
export interface DecisionCursors {
  /** Database-only effects (entry states, timelines, outgoing events) applied through this version. */
  recordedThrough: number;
  /** Host effects (test runs, merges, check runs) carried out through this version. */
  actedThrough: number;
}

/** Storage the queue runner needs beyond the API's stores. */
export interface EngineStore {
  /** The newest snapshot and every decision after it, in order; null when the queue has none. */
  load(queueId: string): Promise<{ snapshot: StoredSnapshot; decisions: StoredDecision[] } | null>;
  /**
   * The compare-and-set every writer goes through: false (nothing written) when
   * this version exists already, i.e. another writer got there first.
   */
  append(decision: StoredDecision): Promise<boolean>;
  /**
   * Writes a snapshot; a snapshot for a version that exists already is left as it is. The state is read
   * before this returns its promise: the caller may change it at once, while the write goes on.
   */
  saveSnapshot(queueId: string, snapshot: StoredSnapshot): Promise<void>;
  /** Decisions after `afterVersion`, oldest first. */
  decisionsAfter(queueId: string, afterVersion: number, limit: number): Promise<StoredDecision[]>;
  cursors(queueId: string): Promise<DecisionCursors>;
  /** Moves a cursor forward (never back, so a late writer cannot rewind it). */
  advanceCursor(queueId: string, cursor: keyof DecisionCursors, version: number): Promise<void>;
  /** Forgets snapshots and decisions older than `version` (kept: the snapshot at or before it and everything after). */
  compact(queueId: string, version: number): Promise<void>;
  remove(queueId: string): Promise<void>;
  /** Queue ids with an engine state (the runner resumes them at start-up). */
  queueIds(): Promise<string[]>;

  /**
   * Records an event for the queue's writer; answers its inbox id. The inbox is read in id order; `after`: an inbox
   * id this event must be read after (an id of the same second from another process may sort either way).
   */
  enqueue(queueId: string, item: Omit<InboxItem, 'id'>, options?: { after?: string }): Promise<string>;
  pending(queueId: string, limit: number): Promise<InboxItem[]>;
  acknowledge(ids: string[]): Promise<void>;
  /** Queues with events waiting, for the poll loop. */
  queuesWithPendingEvents(): Promise<string[]>;

  /**
   * Takes or renews the queue's writer lease until `now + ttlMs`. Built on an
   * insert under a unique key, which is atomic on MongoDB and FerretDB alike.
   * Returns the new epoch (a fencing token), or null when another owner holds it.
   */
  acquireLease(queueId: string, owner: string, now: number, ttlMs: number): Promise<number | null>;
  /** Gives the lease up at once (a clean shutdown), if this owner still holds it. */
  releaseLease(queueId: string, owner: string, now: number): Promise<void>;
}
