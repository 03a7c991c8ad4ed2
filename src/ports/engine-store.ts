import type { EngineAction, EngineEvent, EngineState } from '../engine/model.js';

/** A queue's engine state as stored, with the actions decided but not yet known to be done. */
export interface QueueEngineRecord {
  queueId: string;
  state: EngineState;
  /** Actions persisted with the state that produced them: replayed after a crash. */
  outbox: EngineAction[];
  /** Lease epoch of the writer that saved it (fencing). */
  epoch: number;
}

/** An event waiting for the queue's writer, in arrival order. */
export interface InboxEvent {
  id: string;
  queueId: string;
  event: EngineEvent;
  /** When it happened; decide() is given this time. */
  at: number;
}

/** Storage the queue runner needs beyond the API's stores. */
export interface EngineStore {
  load(queueId: string): Promise<QueueEngineRecord | null>;
  /** Refuses (returns false) when a writer with a newer lease epoch saved meanwhile. */
  save(record: QueueEngineRecord): Promise<boolean>;
  remove(queueId: string): Promise<void>;
  /** Queue ids with an engine state (the runner resumes them at start-up). */
  queueIds(): Promise<string[]>;

  enqueue(queueId: string, event: EngineEvent, at: number): Promise<void>;
  pending(queueId: string, limit: number): Promise<InboxEvent[]>;
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
