import { randomUUID } from 'node:crypto';
import type { EngineEntry, EngineRun, EngineState } from '../engine/model.js';
import type { GitHostRegistry } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import type { StoredDecision } from '../ports/engine-store.js';
import type { HostOutage, QueueRecord, TestRunRecord } from '../domain/records.js';
import { KeyedMutex } from '../concurrency/keyed-mutex.js';
import { Timers } from './timers.js';
import type { WebhookOutbox } from '../ports/webhook-outbox.js';
import type { ServiceMetrics } from '../observability/service-metrics.js';
import { cancelsAfterSubmissions, submissionOf, type InboxItem, type RecordedChange, type RunnerAction, type RunnerInput } from './runner-model.js';
import { executeHostAction, isHostAction, type ActionContext } from './execute-actions.js';
import { entriesRecorded, recordDecision, targetsDecided } from './record-decision.js';
import { hostSteps, supersededStatuses } from './host-steps.js';
import { decideInputs, loadState, PoisonInput, positionsOf, SettleFailed } from './decide-inputs.js';
import { ciHistoryOf, ciSamples, type CiHistory } from '../forecast/ci-history.js';
import { CiHistoryKeeper } from './ci-history-keeper.js';
import { forecastMerges, type MergeForecast } from '../forecast/merge-forecast.js';
import { initialEngineState } from '../engine/initial-state.js';
import { withStoredDefaults } from '../domain/queue-config.js';
import { entryIndex } from '../engine/entry-index.js';
import { isTerminal } from '../domain/pull-request-state.js';
import { runsAndProbes } from '../engine/probes.js';
import { carryOutThroughOutages, retryDelayMs, watchForSlowAnswer } from './host-outage.js';
import { runsInFlight, type RunsInFlight } from './runs-in-flight.js';
import { StateElsewhere } from './state-elsewhere.js';
import type { WaitingPullRequest } from './refresh-waiting-facts.js';

/** The little of a logger the runner needs (pino fits). */
export interface RunnerLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface QueueRunnerOptions {
  stores: Stores;
  hosts: GitHostRegistry;
  log: RunnerLog;
  now?: () => number;
  /** This replica's name in leases. */
  owner?: string;
  leaseTtlMs?: number;
  /** How often to look for events another replica enqueued or a lease that expired. */
  pollMs?: number;
  /** Decisions between snapshots of the engine state. */
  snapshotEvery?: number;
  /** Back-off of host actions that failed (tests make it short). */
  retryDelayMs?: (attempt: number) => number;
  /** Outgoing webhooks for the engine's emitted events. */
  outbox?: WebhookOutbox;
  /** Counts decisions and actions for operators. */
  metrics?: ServiceMetrics;
  /** How long a step of host actions may go unanswered before it counts as an outage (SLOW_ANSWER_MS; tests shorten it). */
  slowAnswerMs?: number;
}

/** An input handed to this replica's writer, and its request waiting for the decision (true: decided here). */
interface Handed {
  item: InboxItem;
  resolve: (decidedHere: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * How far a round got with the inputs handed to it (they are in its first decision), for a round that fails:
 * `unsent` (nothing stored: they go to the inbox), `storing` (the log's insert failed, and may have written it
 * all the same: nobody can tell), `stored` (durable; the next round records it).
 */
type HandedProgress = { handed: 'unsent' | 'storing' | 'stored' };

/** Inbox entries applied per decision. */
const BATCH = 200;
/** Inbox inputs `waitingSubmission` looks through. */
const INBOX_LOOK = 1_000;
/** Stop acting this long before the lease runs out: the next writer may start right after it. */
const LEASE_MARGIN_MS = 2_000;

/** What this replica knows of one queue while it is its writer. */
interface QueueWorker {
  queueId: string;
  queue: QueueRecord;
  state: EngineState;
  /** The version of the last decision applied to `state`. */
  version: number;
  epoch: number;
  leaseExpiresAt: number;
  /** Decisions whose host actions are done. */
  actedThrough: number;
  /**
   * The decisions after `actedThrough`, in order: the host-action loop takes them from here, not from the
   * log (which the local FerretDB answers by reading every stored decision). Read from the log once when
   * the state is loaded; every decision appended since is added here too.
   */
  unacted: StoredDecision[];
  /**
   * Decisions up to here may have been carried out in part already, the answers lost: those unacted when this
   * writer loaded the state (a previous writer's, or this process's before a restart) and those this writer began
   * and did not finish (its lease lapsed, and it took the lease back). Their actions are carried out as asked again
   * (a merge tells the host so: it looks for what it did before, its landing branch and comments).
   */
  triedThrough: number;
  decisionsSinceSnapshot: number;
  /** Runs in flight when the state was loaded: started again once, hosts may have lost them in a restart. */
  resumeRuns: EngineRun[];
  /** The current outage of the queue's host, as the runner saw it. */
  outage: { since: number; attempts: number } | null;
  /** Queue-order positions (byEntry) and entries by id of the current state, computed once per version when a status needs them. */
  places: { version: number; byEntry: Map<string, number> } | null;
  /** The queue order the last decision gave, at its version (places in line come from it without sorting again). */
  queued: { version: number; entries: EngineEntry[] } | null;
  /** Forecast merge times of the current state, computed once per version (and CI history) when asked. */
  forecast?: { version: number; history: CiHistory; byEntry: MergeForecast };
  /** The queue's CI over the last day, for the forecast (read now and then, added to by each run result recorded). */
  ciHistory: CiHistoryKeeper;
}

/** A queue's forecast merge times (epoch ms by entry id) and the CI history they rest on. */
export interface QueueForecast {
  byEntry: MergeForecast;
  history: CiHistory;
  /** How many finished runs the history comes from (0: the defaults). */
  samples: number;
}

/** The forecast's CI history: runs of the last day, read again every ten minutes (see CiHistoryKeeper). */
const CI_HISTORY_WINDOW_MS = 24 * 60 * 60 * 1000;
const CI_HISTORY_TTL_MS = 10 * 60_000;

/**
 * The one writer per queue. Handlers put inputs in the queue's durable inbox;
 * whoever holds the queue's lease decides them in order (decide(), database
 * only), appends the decision to the queue's log under a unique version (the
 * fencing compare-and-set), records its database effects, and answers. Host
 * actions (test branches, merges, check runs) are carried out afterwards, in
 * decision order, by a background loop that retries host outages with back-off.
 */
export class QueueRunner {
  private readonly mutex = new KeyedMutex();
  private readonly leaseMutex = new KeyedMutex();
  private readonly timers = new Timers();
  private readonly owner: string;
  private readonly now: () => number;
  private readonly workers = new Map<string, QueueWorker>();
  private readonly waiters = new Map<string, () => void>();
  /** Inputs handed to this replica while it is the queue's writer: decided without passing through the inbox. */
  private readonly handed = new Map<string, Handed[]>();
  /** Queues whose inputs are decided one by one for a while: deciding them together failed, and one by one names the culprit. */
  private readonly oneByOne = new Set<string>();
  /** Queues whose stored state fails even a tick (a bug): their inputs wait instead of being set aside. */
  private readonly undecidable = new Set<string>();
  /** Queues whose inbox may hold inputs: this process put some there, or a poll or a load says so. */
  private readonly inboxMayHold = new Set<string>();
  private readonly acting = new Map<string, Promise<void>>();
  /** Snapshot writes under way, by queue (see maybeSnapshot). */
  private readonly snapshotting = new Map<string, Promise<void>>();
  /** The decision rounds running per queue, and the queues that asked for one more meanwhile. */
  private readonly rounds = new Map<string, Promise<void>>();
  private readonly roundAgain = new Set<string>();
  /** Queues whose last round failed: the next poll tries again, even with nothing in their inbox. */
  private readonly failedRounds = new Set<string>();
  private readonly actAgain = new Set<string>();
  private readonly sleeping = new Map<string, { timer: NodeJS.Timeout; wake: () => void }>();
  /** The host action each queue's loop is carrying out now, and since when. */
  private readonly carrying = new Map<string, { action: string; since: number }>();
  /** Told of each decision recorded here, with the entries it wrote (views follow the queue without reading it whole). */
  private readonly recordedListeners = new Set<(change: RecordedChange) => void>();
  /** Queues whose state holds a decision being made or recorded (see recordedWorker). */
  private readonly unrecorded = new Map<string, { settled: Promise<void>; settle: () => void }>();
  private poller: NodeJS.Timeout | null = null;
  private polls = 0;
  private stopped = false;

  /** What this replica answers for queues another replica writes. */
  private readonly elsewhere: StateElsewhere;

  constructor(private readonly options: QueueRunnerOptions) {
    this.owner = options.owner ?? `runner-${randomUUID()}`;
    this.now = options.now ?? (() => Date.now());
    this.elsewhere = new StateElsewhere(options.stores.engine, (queueId) => this.ciHistory(queueId), this.now);
  }

  private get leaseTtlMs(): number {
    return this.options.leaseTtlMs ?? 30_000;
  }

  /**
   * Records an input and, when this replica is the queue's writer, waits for
   * the decision (database only, never the host). When another replica is the
   * writer it decides on its next poll. True when this replica decided and
   * recorded it (its effects are then what this process last wrote).
   */
  async dispatch(queueId: string, input: RunnerInput, options: { after?: string } = {}): Promise<boolean> {
    const worker = this.workers.get(queueId);
    // `after`: an inbox input this one is decided after (handed over, it would go before what this replica has not
    // read there; put in the inbox, it is read after it, whichever replica's id sorts first).
    if (worker && this.leaseValid(worker) && options.after === undefined) return this.handOver(queueId, input);
    const id = await this.enqueue(queueId, input, this.now(), options.after);
    const decided = new Promise<void>((resolve) => this.waiters.set(id, resolve));
    // A failed round leaves the input in the inbox, durable: the next poll decides it, and the request is answered
    // as one another replica decides (a failed round is not a failed request).
    await this.decide(queueId).catch((error: unknown) => this.options.log.warn({ err: error, queueId }, 'queue decision failed; retried on the next poll'));
    // Decided (and recorded) here, whatever came after it.
    if (!this.waiters.delete(id)) return decided.then(() => true);
    // Not decided here (another replica is the writer, or the round failed): it stays in the inbox.
    return false;
  }

  /**
   * The inbox id of the entry's last submission waiting there, not decided yet (sent to a replica that is not the
   * writer, or left there by a failed round), or null: a request judged by the entry's stored state (ended) may be
   * about it. Looks at the inbox's first INBOX_LOOK inputs (it is emptied at every poll).
   */
  async waitingSubmission(queueId: string, entryId: string): Promise<string | null> {
    return (await this.inboxSubmissions(queueId)).findLast((submission) => submission.entryId === entryId)?.inboxId ?? null;
  }

  /** The submissions among the inbox's first INBOX_LOOK inputs, with their inbox ids. */
  private async inboxSubmissions(queueId: string) {
    return (await this.options.stores.engine.pending(queueId, INBOX_LOOK)).flatMap(({ id, input }) => {
      const submission = submissionOf(input);
      return submission ? [{ ...submission, inboxId: id }] : [];
    });
  }

  /**
   * The PRs whose submission this replica holds for its next decision, or the inbox holds (its first INBOX_LOOK
   * inputs): submitted and answered, not decided yet (a deletion of the queue now would lose them).
   */
  private async waitingSubmissions(queueId: string): Promise<number[]> {
    const handed = (this.handed.get(queueId) ?? []).flatMap(({ item }) => submissionOf(item.input) ?? []);
    const waiting = [...handed, ...(await this.inboxSubmissions(queueId))];
    return [...new Set(waiting.map((submission) => submission.prNumber))].sort((a, b) => a - b);
  }

  /**
   * This replica is the queue's writer: the input goes straight to its next decision, whose log entry is
   * its durable record (the request is answered only once that is stored and recorded). The inbox is for
   * inputs another replica must decide: here it would cost a write and a delete per request. A round that
   * cannot decide it (the lease lost, the decision refused) puts it in the inbox for the next writer.
   */
  private handOver(queueId: string, input: RunnerInput): Promise<boolean> {
    const decided = new Promise<boolean>((resolve, reject) => {
      const item: InboxItem = { id: `handed-${randomUUID()}`, queueId, input, at: this.now(), handed: true };
      const waiting = this.handed.get(queueId);
      if (waiting) waiting.push({ item, resolve, reject });
      else this.handed.set(queueId, [{ item, resolve, reject }]);
    });
    // What becomes of the input is told by `decided` (decided, left to the inbox, or failed with the round).
    this.decide(queueId).catch(() => undefined);
    return decided;
  }

  /**
   * A submission taken in after a cancel of it was decided (the cancel came first, in an earlier round: sent to another
   * replica while this one had claimed the submission and not yet handed it over): its entry is stored CANCELLED while
   * the engine now holds it. The engine is told to cancel it too (through the inbox, decided next), so the two agree
   * again. In memory for what this process wrote; a read only for an entry it did not write.
   */
  private async cancelEndedOnArrival(worker: QueueWorker, actions: RunnerAction[]): Promise<void> {
    const { entries } = this.options.stores;
    for (const action of actions) {
      if (action.type !== 'record_entry' || !entryIndex(worker.state.entries).has(action.entryId)) continue;
      const stored = entries.lastWritten(action.entryId) ?? (await entries.findById(action.entryId));
      if (!stored || !isTerminal(stored.state)) continue;
      this.options.log.warn({ queueId: worker.queueId, prNumber: action.prNumber }, 'a submission arrived after its cancel: cancelling it in the engine too');
      await this.enqueue(worker.queueId, { type: 'cancel_requested', entryId: action.entryId, prNumber: action.prNumber }, this.now());
      this.kick(worker.queueId);
    }
  }

  /**
   * Writes an input to the queue's inbox (another replica may be the writer); its id there. The inbox may hold it
   * from the write's start, and holds it for sure once written: a round that read the inbox between the two, before
   * the write showed, took the first mark away, and the next round must read it again (else the input waited for a
   * poll, and a newer input handed over meanwhile was decided before it).
   */
  private async enqueue(queueId: string, input: RunnerInput, at: number, after?: string): Promise<string> {
    this.inboxMayHold.add(queueId);
    const id = await this.options.stores.engine.enqueue(queueId, { queueId, input, at }, after === undefined ? {} : { after });
    this.inboxMayHold.add(queueId);
    return id;
  }

  /** Calls `listener` after each decision this replica records (the cursor moved, before the requests it decided are answered). */
  onRecorded(listener: (change: RecordedChange) => void): void {
    this.recordedListeners.add(listener);
  }

  /** A listener's failure is its own: the decision is stored and recorded whatever a view cache makes of it. */
  private tellRecorded(change: RecordedChange): void {
    for (const listener of this.recordedListeners) {
      try {
        listener(change);
      } catch (error) {
        this.options.log.warn({ err: error, queueId: change.queueId }, 'a listener of recorded decisions failed');
      }
    }
  }

  /** Records an input and answers at once; the decision follows in the background. */
  async record(queueId: string, input: RunnerInput): Promise<void> {
    await this.enqueue(queueId, input, this.now());
    this.kick(queueId);
  }

  /** Decides what waits for a queue (its inbox included), in the background. */
  kick(queueId: string): void {
    this.inboxMayHold.add(queueId);
    this.decide(queueId).catch((error: unknown) => this.options.log.warn({ err: error, queueId }, 'queue decision failed; retried on the next poll'));
  }

  /** Resumes every queue (actions not yet done, timers, runs in flight) and starts polling. */
  async start(): Promise<void> {
    for (const queueId of await this.options.stores.engine.queueIds()) {
      this.inboxMayHold.add(queueId);
      await this.decide(queueId);
    }
    const pollMs = this.options.pollMs ?? 2_000;
    this.poller = setInterval(() => void this.poll(), pollMs);
    this.poller.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.poller) clearInterval(this.poller);
    this.timers.clearAll();
    for (const { timer, wake } of this.sleeping.values()) {
      clearTimeout(timer);
      wake();
    }
    await Promise.allSettled([...this.acting.values(), ...this.snapshotting.values()]);
    // Hand the queues over at once instead of after the lease expires.
    for (const queueId of [...this.workers.keys()]) {
      await this.mutex.run(queueId, () => this.options.stores.engine.releaseLease(queueId, this.owner, this.now()));
    }
    this.workers.clear();
  }

  /**
   * Deletes a queue between this replica's decisions of it, so what `remove` counts (entries, submissions waiting
   * for a decision) does not change under it here: `remove` deletes the queue, or answers why not. It is given the
   * PRs whose submission waits for a decision in this replica's memory or in the inbox (a new attempt of an ended
   * PR claims nothing: only these tell of it). Once the queue is deleted, the runner forgets it.
   */
  async retire<T extends { ok: boolean }>(queueId: string, remove: (waitingSubmissions: number[]) => Promise<T>): Promise<T> {
    return this.mutex.run(queueId, async () => {
      const removed = await remove(await this.waitingSubmissions(queueId));
      if (removed.ok) await this.forgetHeld(queueId);
      return removed;
    });
  }

  /** Forgets a deleted queue (under its mutex). */
  private async forgetHeld(queueId: string): Promise<void> {
    this.timers.clear(queueId);
    this.workers.delete(queueId);
    this.forgetQueueGauges(queueId);
    this.failedRounds.delete(queueId);
    await this.snapshotting.get(queueId); // Not written after the removal.
    await this.options.stores.engine.remove(queueId);
  }

  /** Per-queue gauges this replica reports only while it writes the queue. */
  private forgetQueueGauges(queueId: string): void {
    this.options.metrics?.queueStalled.remove({ queue: queueId });
    this.options.metrics?.hostOutage.remove({ queue: queueId });
  }

  /** What this replica is busy with, per queue (diagnostics: a stop or a queue that hangs says where). */
  activity(): { deciding: string[]; acting: string[]; carrying: Array<{ queueId: string; action: string; forMs: number }> } {
    const now = this.now();
    return {
      deciding: [...this.rounds.keys()],
      acting: [...this.acting.keys()],
      carrying: [...this.carrying].map(([queueId, { action, since }]) => ({ queueId, action, forMs: now - since })),
    };
  }

  /**
   * Waits until the queue's inbox is empty and every host action decided so far
   * is done (tests, diagnostics). Only meaningful on the replica that is the writer.
   */
  async settled(queueId: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.inboxMayHold.add(queueId);
      await this.decide(queueId);
      await this.acting.get(queueId);
      const inboxEmpty = (await this.options.stores.engine.pending(queueId, 1)).length === 0;
      // Looked at after the inbox read: a round that began meanwhile (an input the host-action loop reported just
      // before it ended) may have taken its input from the inbox, and still be recording what it decided.
      const worker = this.workers.get(queueId);
      const idle =
        !this.rounds.has(queueId) &&
        !this.handed.has(queueId) &&
        !this.acting.has(queueId) &&
        (!worker || (worker.actedThrough >= worker.version && worker.resumeRuns.length === 0));
      if (idle && inboxEmpty) return;
      if (Date.now() > deadline) throw new Error(`queue ${queueId} did not settle in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /**
   * The NOT_READY PRs of a queue this replica writes, from its state in memory, with the mergeability the engine
   * was told, and the queued PRs the engine builds nothing with until their facts are read again (awaitingFacts);
   * null when this replica is not the queue's writer (the writer's replica looks at them).
   */
  waitingPullRequests(queueId: string): WaitingPullRequest[] | null {
    const worker = this.writtenHere(queueId);
    if (!worker) return null;
    return worker.state.entries.flatMap((entry) => {
      if (entry.state !== 'NOT_READY' && !entry.awaitingFacts) return [];
      return [{ entryId: entry.id, prNumber: entry.prNumber, mergeability: entry.facts?.mergeability ?? null, ...(entry.awaitingFacts ? { awaitingFacts: true as const } : {}) }];
    });
  }

  /** How many PRs a queue this replica writes holds, from its state in memory; null when this replica is not its writer. */
  enqueuedCount(queueId: string): number | null {
    return this.writtenHere(queueId)?.state.entries.length ?? null;
  }

  /**
   * While this replica writes the queue: an object that stays the same as long as it holds the lease without a
   * break (a reload, or another replica's tenure between, gives another); null otherwise. What this replica's
   * decisions tell (`onRecorded`) is all that changes the queue's entries during one tenure.
   */
  writerTenure(queueId: string): object | null {
    return this.writtenHere(queueId) ?? null;
  }

  /** The queue's worker while this replica is its writer with time left on the lease. */
  private writtenHere(queueId: string): QueueWorker | undefined {
    const worker = this.workers.get(queueId);
    return worker && this.leaseValid(worker) ? worker : undefined;
  }

  /**
   * Forecast merge times of a queue (check runs, the API's views, the dashboard).
   * The writer computes them once per state version, on the CI history it keeps (read every ten minutes, runs it
   * records added between); a replica that is not the writer answers from the state it last loaded (see StateElsewhere).
   */
  async mergeForecast(queueId: string): Promise<QueueForecast> {
    const worker = await this.recordedWorker(queueId);
    return worker ? this.forecastOf(worker) : this.elsewhere.forecast(queueId);
  }

  private async forecastOf(worker: QueueWorker): Promise<QueueForecast> {
    const now = this.now();
    const ciHistory = await worker.ciHistory.current();
    if (worker.forecast?.version !== worker.version || worker.forecast.history !== ciHistory.history) {
      worker.forecast = { version: worker.version, history: ciHistory.history, byEntry: forecastMerges(worker.state, ciHistory.history, now, this.decidedOrder(worker)) };
    }
    return { byEntry: worker.forecast.byEntry, history: ciHistory.history, samples: ciHistory.samples.length };
  }

  /** The queue's runs finished over the last day (median duration and failure share come from them). */
  private finishedRunsOf(queueId: string): Promise<TestRunRecord[]> {
    return this.options.stores.testRuns.listFinishedSince(queueId, new Date(this.now() - CI_HISTORY_WINDOW_MS));
  }

  /** The queue's CI over the last day: median run duration and failure share (and how many runs said so). */
  private async ciHistory(queueId: string): Promise<{ history: CiHistory; samples: number }> {
    const samples = ciSamples(await this.finishedRunsOf(queueId));
    return { history: ciHistoryOf(samples), samples: samples.length };
  }

  /** A queue's state changes in place for a decision not yet recorded: readers of it (`recordedWorker`) wait. */
  private unrecordedState(queueId: string): void {
    if (this.unrecorded.has(queueId)) return;
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    this.unrecorded.set(queueId, { settled, settle });
  }

  /** The queue's state is that of a recorded decision again (or of none, the worker dropped): readers go on. */
  private recordedState(queueId: string): void {
    this.unrecorded.get(queueId)?.settle();
    this.unrecorded.delete(queueId);
  }

  /**
   * The queue's worker once its state is that of a recorded decision (the state changes in place while a decision
   * is made, before it is stored): a board shows runs beside the entries of the same decision, never runs of one
   * whose entries are not written yet, or of one that is then dropped.
   */
  private async recordedWorker(queueId: string): Promise<QueueWorker | undefined> {
    for (let pending = this.unrecorded.get(queueId); pending; pending = this.unrecorded.get(queueId)) await pending.settled;
    return this.workers.get(queueId);
  }

  /** The runs the engine has in flight (the dashboard's board), as of its last recorded decision. */
  async runsInFlight(queueId: string): Promise<RunsInFlight | null> {
    const worker = await this.recordedWorker(queueId);
    return worker ? runsInFlight(worker.state) : this.elsewhere.runsInFlight(queueId);
  }

  /** The engine's current view of a queue (tests and diagnostics), as of its last recorded decision. */
  async engineState(queueId: string): Promise<EngineState | null> {
    const worker = await this.recordedWorker(queueId);
    return worker ? structuredClone(worker.state) : this.elsewhere.state(queueId);
  }

  private async poll(): Promise<void> {
    if (this.stopped) return;
    try {
      const { engine } = this.options.stores;
      // Every third of a lease, every queue: this replica renews the leases it holds while idle, and
      // takes over those of a writer that died (actions to finish, runs to resume).
      const sweepEvery = Math.max(1, Math.floor(this.leaseTtlMs / 3 / (this.options.pollMs ?? 2_000)));
      const all = this.polls++ % sweepEvery === 0;
      const queueIds = all ? await engine.queueIds() : await engine.queuesWithPendingEvents();
      // A round that failed after its inputs left the inbox (a decision stored, not all recorded) leaves nothing there to poll for.
      for (const queueId of new Set([...queueIds, ...this.failedRounds])) this.kick(queueId);
    } catch (error) {
      this.options.log.warn({ err: error }, 'queue poll failed');
    }
  }

  /** True while this replica holds the queue's lease with time to spare; renews it once a third is used. */
  private async holdLease(queueId: string): Promise<{ epoch: number; expiresAt: number } | null> {
    return this.leaseMutex.run(queueId, async () => {
      const worker = this.workers.get(queueId);
      const now = this.now();
      if (worker && worker.leaseExpiresAt - now > (this.leaseTtlMs * 2) / 3) return { epoch: worker.epoch, expiresAt: worker.leaseExpiresAt };
      const epoch = await this.options.stores.engine.acquireLease(queueId, this.owner, now, this.leaseTtlMs);
      if (epoch === null) {
        // Another replica is the writer: what this one knew may be stale by now, and its gauges are that replica's to
        // report (this one's last value, a stall or an outage, would never clear here).
        if (this.workers.delete(queueId)) this.forgetQueueGauges(queueId);
        return null;
      }
      if (worker && epoch !== worker.epoch + 1) {
        // Epochs count every taking of the lease: another replica held it since this one last did (this one stalled
        // past its lease). It may have decided, snapshotted and compacted the versions this state would go on from,
        // so the state is loaded again: appended from here, a decision would take a version the log no longer holds.
        this.workers.delete(queueId);
      } else if (worker) {
        worker.epoch = epoch;
        worker.leaseExpiresAt = now + this.leaseTtlMs;
      }
      return { epoch, expiresAt: now + this.leaseTtlMs };
    });
  }

  private leaseValid(worker: QueueWorker): boolean {
    return !this.stopped && this.workers.get(worker.queueId) === worker && worker.leaseExpiresAt - this.now() > LEASE_MARGIN_MS;
  }

  /**
   * Applies what waits in the queue's inbox, if this replica holds (or can take)
   * its lease. Calls while a round runs do not queue rounds of their own: they
   * ask for one more, which takes everything that arrived meanwhile at once
   * (64 concurrent submits make a few decisions, not 64).
   */
  private decide(queueId: string): Promise<void> {
    const running = this.rounds.get(queueId);
    if (running) {
      this.roundAgain.add(queueId);
      return running;
    }
    const rounds = (async () => {
      for (;;) {
        this.roundAgain.delete(queueId);
        try {
          await this.decideRound(queueId);
          this.failedRounds.delete(queueId);
        } catch (error) {
          this.failedRounds.add(queueId);
          if (!this.roundAgain.has(queueId)) {
            this.rounds.delete(queueId);
            throw error;
          }
        }
        // Checked and cleared in the same turn: a caller either sees this round running or starts the next.
        if (!this.roundAgain.has(queueId)) {
          this.rounds.delete(queueId);
          return;
        }
      }
    })();
    this.rounds.set(queueId, rounds);
    return rounds;
  }

  private decideRound(queueId: string): Promise<void> {
    return this.mutex.run(queueId, async () => {
      // The inputs handed over until now are this round's (with what the inbox holds); later ones, the next round's.
      const handed = this.handed.get(queueId) ?? [];
      this.handed.delete(queueId);
      const undecided = new Set(handed);
      const progress: HandedProgress = { handed: 'unsent' };
      try {
        await this.decideRoundWith(queueId, handed, undecided, progress);
      } catch (error) {
        this.inboxMayHold.add(queueId); // What the failed round read from it is still there.
        const left = [...undecided];
        undecided.clear();
        // A failed round is not a failed request: what it had not stored waits in the inbox (answered as to be
        // decided, like an input another replica decides); what it stored is decided. Only a store that may or may not
        // have written the decision fails its requests: put in the inbox too, they could be decided twice.
        if (progress.handed === 'unsent') {
          if (left.length > 0) await this.leaveToInbox(queueId, left);
        } else {
          for (const { resolve, reject } of left) {
            if (progress.handed === 'stored') resolve(false);
            else reject(error);
          }
        }
        throw error;
      } finally {
        this.recordedState(queueId); // A round that ended without recording dropped the worker: its state is gone.
      }
      // Not decided here (the lease lost, the decision refused, an input set aside): left to the inbox, decided
      // by whoever is the writer next (this replica too, when it takes the lease again).
      if (undecided.size > 0) await this.leaveToInbox(queueId, [...undecided]);
    });
  }

  private async leaveToInbox(queueId: string, left: Handed[]): Promise<void> {
    await Promise.all(
      left.map(({ item, resolve, reject }) =>
        this.enqueue(queueId, item.input, item.at).then(
          () => resolve(false),
          (error: unknown) => reject(error),
        ),
      ),
    );
    this.kick(queueId);
  }

  private async decideRoundWith(queueId: string, handed: Handed[], undecided: Set<Handed>, progress: HandedProgress): Promise<void> {
    if (this.stopped) return;
    const lease = await this.holdLease(queueId);
    if (!lease) return;
    const worker = this.workers.get(queueId) ?? (await this.load(queueId, lease));
    if (!worker) return;
    const { engine } = this.options.stores;
    let inbox: InboxItem[] = [];
    for (let first = true; ; first = false) {
      // Read only when something may be there: most inputs of a busy writer were handed over.
      inbox = this.inboxMayHold.delete(queueId) ? await engine.pending(queueId, BATCH) : [];
      if (inbox.length === BATCH) this.inboxMayHold.add(queueId);
      const holding = entryIndex(worker.state.entries);
      const items = cancelsAfterSubmissions(first ? [...inbox, ...handed.map((h) => h.item)] : inbox, (entryId) => holding.has(entryId));
      if (items.length === 0) break;
      // What arrives from now on is decided in the next round, which its sender asked for.
      await this.withRecordedConfig(worker, items);
      let decided;
      const together = !this.oneByOne.has(queueId);
      // From here until the decision is recorded (or the round ends without it), `state` is not for showing.
      this.unrecordedState(queueId);
      try {
        decided = decideInputs(worker.state, items, together);
      } catch (error) {
        if (error instanceof SettleFailed) {
          // A bug that names no input: the state is reloaded and these inputs decided one by one (from the inbox),
          // which sets the one to blame aside.
          this.options.log.error({ err: error.cause, queueId }, 'the engine could not settle inputs decided together; deciding them one by one');
          this.workers.delete(queueId);
          this.oneByOne.add(queueId);
          this.kick(queueId);
          return;
        }
        if (!(error instanceof PoisonInput)) {
          this.workers.delete(queueId); // The state may be half-changed: reloaded from the log next round.
          throw error;
        }
        this.workers.delete(queueId); // The state may be half-changed: reloaded from the log next round.
        const blame = await this.blameForPoison(queueId);
        if (blame === 'unknown') {
          // The state could not be read to tell: no input is set aside on a guess. The next poll tries again.
          this.options.log.warn({ err: error.cause, queueId }, 'an input could not be applied and the stored state could not be read to tell why; tried again on the next poll');
          this.failedRounds.add(queueId);
          return;
        }
        if (blame === 'state') {
          // The stored state is what cannot be decided, not this input: setting inputs aside would drop them all in
          // turn, and deciding again at once would loop (load, tick, fail) as fast as the database answers. The
          // inputs wait (those handed over go to the inbox) and each poll tries again; a fixed state resumes.
          if (!this.undecidable.has(queueId)) {
            this.options.log.error({ err: error.cause, queueId }, "the queue's stored state cannot be decided: its inputs wait, tried again on each poll");
            // The API says why nothing moves (queue_stalled); the first decision after a fix writes the engine's own note over it.
            const message = "The queue's stored state cannot be decided (a bug in the service, logged as an error): every PR keeps its place and waits, and the queue retries on its own.";
            await this.options.stores.queues.update(queueId, { stalled: { since: new Date(this.now()), message }, updatedAt: new Date(this.now()) });
          }
          this.undecidable.add(queueId);
          this.failedRounds.add(queueId);
          return;
        }
        // A bug in this input, not an outage: set it aside.
        this.options.log.error({ err: error.cause, queueId, input: error.item.input }, 'the engine could not apply an input; it was set aside');
        if (error.item.handed) {
          const poisoned = handed.find((h) => h.item === error.item) as Handed;
          undecided.delete(poisoned);
          poisoned.resolve(false);
        } else await engine.acknowledge([error.item.id]);
        this.kick(queueId);
        return;
      }
      worker.state = decided.state;
      // Persist, then act, and only while the lease holds: a writer that lost it does neither.
      if (!this.leaseValid(worker)) {
        this.workers.delete(queueId);
        return;
      }
      const version = worker.version + 1;
      // The state was changed in place: if the decision is not stored, that change must not outlive it
      // (the inputs stay in the inbox and the next round applies them to the state reloaded from the log).
      const decision: StoredDecision = { queueId, version, epoch: worker.epoch, items, actions: decided.actions, ...(together ? { together: true as const } : {}) };
      if (first && handed.length > 0) progress.handed = 'storing';
      const stored = await engine.append(decision).catch((error: unknown) => {
        this.workers.delete(queueId);
        throw error;
      });
      if (first && handed.length > 0) progress.handed = stored ? 'stored' : 'unsent';
      if (!stored) {
        this.options.log.warn({ queueId, version, epoch: worker.epoch }, 'another writer decided this version first; reloading');
        this.workers.delete(queueId);
        return;
      }
      if (!this.leaseValid(worker)) {
        // Stored, but the lease ran out meanwhile (a stall): the next writer, maybe another replica already, records it
        // from the log. Recorded from here, it could overwrite entries that writer wrote since. Its requests are answered
        // as decided elsewhere (the decision is durable); its inbox inputs stay for the next writer to acknowledge.
        this.options.log.warn({ queueId, version }, 'the lease ran out while a decision was stored; the next writer records it');
        this.workers.delete(queueId);
        this.failedRounds.add(queueId); // Nothing may be left in the inbox to poll for: the next poll tries again (this replica may be that writer).
        if (first) for (const done of handed) if (undecided.delete(done)) done.resolve(false);
        return;
      }
      worker.version = version;
      worker.queued = decided.queued ? { version, entries: decided.queued } : null;
      if (!together) this.oneByOne.delete(queueId); // Decided: the next inputs go together again.
      this.undecidable.delete(queueId);
      for (const item of items) this.options.metrics?.engineDecisions.inc({ event: item.input.type });
      for (const action of decided.actions) this.options.metrics?.engineActions.inc({ action: action.type });
      try {
        // The inputs leave the inbox while the decision is recorded: both are done before anyone is answered
        // (a reload acknowledges what the log holds, and records it again, if either fails).
        // A finished run, once recorded, joins the CI history the forecast rests on (a history read that overlaps
        // its recording may or may not find it: not kept, see CiHistoryKeeper).
        const recordsRuns = decided.actions.some((a) => a.type === 'record_test_result' || (a.type === 'cancel_run' && a.timedOut));
        if (recordsRuns) worker.ciHistory.recordingRuns();
        const [, recorded] = await Promise.all([engine.acknowledge(inbox.map((item) => item.id)), recordDecision(this.context(worker), version, decided.actions)]);
        if (recordsRuns) worker.ciHistory.recordedRuns(recorded.finishedRuns);
        await this.cancelEndedOnArrival(worker, decided.actions);
        // Views cached by this version know they are stale (see EnqueuedEntriesCache); before any waiter is answered.
        await engine.advanceCursor(queueId, 'recordedThrough', version);
        // As the log holds it (JSON), for the host-action loop, once recorded: a loop already busy takes it at its next
        // turn, and its host actions read what the record wrote (a run started from a decision still being recorded
        // described its PRs from entries not written yet, as PR #0).
        worker.unacted.push(JSON.parse(JSON.stringify(decision)) as StoredDecision);
        this.tellRecorded({ queueId, from: version - 1, to: version, entryIds: entriesRecorded(items, decided.actions), targetsOf: targetsDecided(items) });
        await this.syncQueueRecord(worker);
      } catch (error) {
        // Decided and stored, not all recorded: the next round reloads, which acknowledges and records it again.
        this.workers.delete(queueId);
        throw error;
      }
      this.recordedState(queueId); // Before anyone is answered: what they are told is what a board shows.
      for (const item of inbox) {
        this.waiters.get(item.id)?.();
        this.waiters.delete(item.id);
      }
      if (first) {
        for (const done of handed) if (undecided.delete(done)) done.resolve(true);
      }
      this.maybeSnapshot(worker);
      if (inbox.length < BATCH) break;
    }
    this.act(worker);
  }

  /**
   * A configuration change is decided with the queue's configuration as its record holds it now, not as the input
   * carried it: inputs can be decided in another order than their updates were written (one waited in the inbox
   * while a later one was handed over, or came from another replica), and an older configuration decided last
   * would undo the newer one. The log keeps the input as decided, so a reload replays the same.
   * Read before the decision is in the log: the host-action loop reads new decisions from there and carries them
   * out with worker.queue, which must already say what the operator changed (a landing predicted with the old
   * mergeMethod blocked the queue again).
   */
  private async withRecordedConfig(worker: QueueWorker, items: InboxItem[]): Promise<void> {
    const changes = items.filter((item) => item.input.type === 'config_changed');
    if (changes.length === 0) return;
    const queue = await this.options.stores.queues.findById(worker.queueId);
    if (!queue) return; // Being deleted: the inputs as they came.
    worker.queue = queue;
    for (const item of changes) item.input = { type: 'config_changed', config: queue.config, requestedState: queue.requestedState };
  }

  /**
   * What an input that could not be applied says: the input is to blame, or the stored state (it fails even a
   * tick), or nothing can be told (the state could not be read).
   */
  private async blameForPoison(queueId: string): Promise<'input' | 'state' | 'unknown'> {
    let loaded;
    try {
      loaded = await this.options.stores.engine.load(queueId);
    } catch {
      return 'unknown';
    }
    if (!loaded) return 'input';
    try {
      decideInputs(loadState(loaded.snapshot, loaded.decisions), [{ id: 'probe', queueId, input: { type: 'tick' }, at: this.now() }]);
      return 'input';
    } catch {
      return 'state';
    }
  }

  /** Rebuilds the queue's state from its snapshot and log, and finishes what a previous writer left. */
  private async load(queueId: string, lease: { epoch: number; expiresAt: number }): Promise<QueueWorker | null> {
    const { stores, log } = this.options;
    // Becoming the writer: what this process knew of the entries may have been changed by the writer before it.
    stores.entries.forgetWritten(queueId);
    const queue = await stores.queues.findById(queueId);
    if (!queue) {
      await stores.engine.remove(queueId);
      return null;
    }
    const loaded = await stores.engine.load(queueId);
    const cursors = await stores.engine.cursors(queueId);
    const worker: QueueWorker = {
      queueId,
      queue,
      state: loaded ? loadState(loaded.snapshot, loaded.decisions) : initialState(queue),
      version: loaded ? (loaded.decisions.at(-1)?.version ?? loaded.snapshot.version) : 0,
      epoch: lease.epoch,
      leaseExpiresAt: lease.expiresAt,
      actedThrough: cursors.actedThrough,
      unacted: [],
      triedThrough: 0,
      decisionsSinceSnapshot: loaded?.decisions.length ?? 0,
      resumeRuns: [],
      outage: null,
      places: null,
      queued: null,
      ciHistory: new CiHistoryKeeper(() => this.finishedRunsOf(queueId), this.now, CI_HISTORY_TTL_MS),
    };
    // An outage a previous writer reported is this writer's until a host action succeeds and says it ended: started
    // afresh, the engine would wait for a recovery nobody reports (it starts and merges nothing meanwhile).
    if (worker.state.hostOutage) worker.outage = { since: worker.state.hostOutage.since, attempts: 1 };
    // Decisions not acted on yet; those before the snapshot (its compaction keeps them) only from the log.
    worker.unacted =
      loaded && cursors.actedThrough < loaded.snapshot.version
        ? await stores.engine.decisionsAfter(queueId, cursors.actedThrough, Number.MAX_SAFE_INTEGER)
        : (loaded?.decisions ?? []).filter((decision) => decision.version > cursors.actedThrough);
    worker.triedThrough = worker.unacted.at(-1)?.version ?? 0;
    // Runs whose start is still among the actions to carry out are started by those; the others again, once.
    const toStart = new Set(worker.unacted.flatMap((d) => d.actions.flatMap((a) => (a.type === 'start_run' ? [a.run.id] : []))));
    // Probes (engine/probes.ts) too: one never reported would hold its CI slot until the test timeout.
    worker.resumeRuns = runsAndProbes(worker.state).filter((run) => run.status === 'running' && !toStart.has(run.id));
    if (!loaded) await stores.engine.saveSnapshot(queueId, { version: 0, state: worker.state });
    // Database effects a previous writer decided but may not have recorded (each write is keyed: repeats change nothing).
    // Inputs a decision applied leave the inbox right after it is stored; a writer that died in between left them there.
    const applied = (loaded?.decisions ?? []).flatMap((decision) => decision.items.filter((item) => !item.handed).map((item) => item.id));
    if (applied.length > 0) await stores.engine.acknowledge(applied);
    const unrecorded = (loaded?.decisions ?? []).filter((decision) => decision.version > cursors.recordedThrough);
    if (unrecorded.length > 0) log.info({ queueId, decisions: unrecorded.length }, 'recording again the decisions since the last snapshot (repeats change nothing)');
    for (const decision of unrecorded) await recordDecision(this.context(worker), decision.version, decision.actions);
    if (worker.version > cursors.recordedThrough) await stores.engine.advanceCursor(queueId, 'recordedThrough', worker.version);
    // Settings the queue record has and the engine does not: updateQueue writes the record, then tells the engine, and a
    // process that died in between (or an inbox write that failed) left them apart for good (found by review: a pause
    // shown but never applied; a queue file delivered again found its settings "unchanged"). The record is what the
    // operator was answered: the engine hears it now.
    if (!this.undecidable.has(queueId) && !engineHasSettings(worker.state, queue)) {
      log.warn({ queueId }, "the queue's settings differ from the engine's (a change not told to it): telling it now");
      await this.enqueue(queueId, { type: 'config_changed', config: queue.config, requestedState: queue.requestedState }, this.now());
    }
    // A tick re-arms timers (timeouts, batch waits) and asks for the branch head if unknown (not for a state known
    // undecidable: one more tick per poll would pile up in its inbox).
    if (!this.undecidable.has(queueId)) await this.enqueue(queueId, { type: 'tick' }, this.now());
    // Kept only now: a load that failed part-way (a record above threw) must be done again by the next round,
    // or the decisions it did not record never would be (the engine TESTING, the entry PENDING for good).
    this.workers.set(queueId, worker);
    return worker;
  }

  /**
   * Snapshots now and then, off the decision round: a snapshot writes the whole state (about 1.4 MB and 285 ms at
   * 5,000 PRs), and written inside the round it held up every submit waiting for the next one (rounds of 8 ms at the
   * median took 40 to 105 ms with one, at 300 to 1,800 PRs). The state is serialized as of its version and written
   * in the background, one write per queue at a time; a load replays the log from the newest snapshot stored, so
   * one written late or not at all only lengthens that replay.
   */
  private maybeSnapshot(worker: QueueWorker): void {
    worker.decisionsSinceSnapshot++;
    // In a long queue one every tenth of its length, so its cost per decision does not grow with the queue (a load
    // replays at most that many).
    if (worker.decisionsSinceSnapshot < Math.max(this.options.snapshotEvery ?? 100, Math.ceil(worker.state.entries.length / 10))) return;
    const { queueId } = worker;
    if (this.snapshotting.has(queueId)) return; // The next round asks again.
    worker.decisionsSinceSnapshot = 0;
    const { engine } = this.options.stores;
    const { version } = worker;
    // The store reads the state before the call returns (the port says so), so the next rounds may change it in
    // place while it is written; a copy here would double the time the snapshot holds the event loop.
    const saved = engine.saveSnapshot(queueId, { version, state: worker.state });
    const write = (async () => {
      await saved;
      // Decisions whose host actions are not done yet stay (the background loop reads them).
      await engine.compact(queueId, Math.min(version, worker.actedThrough));
    })()
      .catch((error: unknown) => this.options.log.warn({ err: error, queueId, version }, 'a snapshot of the engine state was not written; the log is replayed from the one before'))
      .finally(() => this.snapshotting.delete(queueId));
    this.snapshotting.set(queueId, write);
  }

  /** The queue record shows what the engine is doing (SWITCHING_MODES, a host outage); written here only. */
  private async syncQueueRecord(worker: QueueWorker): Promise<void> {
    const { queue, state } = worker;
    const switching = state.switchingToMode !== null;
    // Queue-wide notes the engine keeps under the same names the queue record shows them by.
    const notes: Partial<Record<(typeof QUEUE_NOTES)[number], HostOutage | null>> = {};
    for (const field of QUEUE_NOTES) {
      const shown = shownNote(field === 'landingBlocked' ? withNextTry(state.landingBlocked) : state[field]);
      if (!sameNote(shown, queue[field] ?? null)) notes[field] = shown;
    }
    this.options.metrics?.queueStalled.set({ queue: worker.queueId }, state.stalled ? 1 : 0);
    const switchChanged = switching !== (queue.modeSwitchStartedAt !== null);
    if (!switchChanged && Object.keys(notes).length === 0) return;
    const updated = await this.options.stores.queues.update(worker.queueId, {
      ...(switchChanged ? { modeSwitchStartedAt: switching ? new Date(this.now()) : null } : {}),
      ...notes,
      updatedAt: new Date(this.now()),
    });
    if (updated) worker.queue = updated;
  }

  private context(worker: QueueWorker): ActionContext {
    return {
      queue: worker.queue,
      stores: this.options.stores,
      hosts: this.options.hosts,
      log: this.options.log,
      timers: this.timers,
      now: this.now,
      ...(this.options.outbox ? { outbox: this.options.outbox } : {}),
      report: (input) => this.record(worker.queueId, input),
      wake: () => void this.record(worker.queueId, { type: 'tick' }).catch((error: unknown) => this.options.log.warn({ err: error, queueId: worker.queueId }, 'queue wake-up failed')),
      positionOf: (entryId) => this.placesOf(worker).byEntry.get(entryId),
      queuedPullRequest: (entryId) => {
        const entry = entryIndex(worker.state.entries).get(entryId);
        return entry ? { prNumber: entry.prNumber, headSha: entry.facts?.headSha ?? null } : undefined;
      },
      estimatedMergeAt: async (entryId) => (await this.forecastOf(worker)).byEntry.get(entryId),
    };
  }

  /** Places in line in the current state, computed once per version when asked (from the order its decision gave). */
  private placesOf(worker: QueueWorker): NonNullable<QueueWorker['places']> {
    if (worker.places?.version !== worker.version) worker.places = { version: worker.version, byEntry: positionsOf(worker.state, this.decidedOrder(worker)) };
    return worker.places;
  }

  /** The queue order of the current state as the decision that made it computed it (queueOrder's), if that is known. */
  private decidedOrder(worker: QueueWorker): EngineEntry[] | undefined {
    return worker.queued?.version === worker.version ? worker.queued.entries : undefined;
  }

  /** Starts the background loop that carries out host actions, unless it runs already. */
  private act(worker: QueueWorker): void {
    const { queueId } = worker;
    if (this.acting.has(queueId)) {
      this.actAgain.add(queueId);
      return;
    }
    const loop = this.actLoop(worker)
      .catch((error: unknown) => this.options.log.warn({ err: error, queueId }, 'carrying out queue actions failed; resumed on the next poll'))
      .finally(() => {
        this.acting.delete(queueId);
        if (this.actAgain.delete(queueId) && !this.stopped) {
          const current = this.workers.get(queueId);
          if (current) this.act(current);
        }
      });
    this.acting.set(queueId, loop);
  }

  private async actLoop(worker: QueueWorker): Promise<void> {
    const { engine } = this.options.stores;
    while (worker.resumeRuns.length > 0) {
      const run = worker.resumeRuns[0] as EngineRun;
      if (!(await this.carryOut(worker, [{ type: 'start_run', run }]))) return;
      worker.resumeRuns.shift();
    }
    for (;;) {
      if (this.stopped || !this.leaseValid(worker)) return;
      const decisions = worker.unacted.slice(0, 20);
      if (decisions.length === 0) return;
      const superseded = supersededStatuses(decisions.map((d) => d.actions));
      // A host that answers from this service's database (the sandbox) takes a decision's statuses at once
      // (its store writes them as one command); a remote host gets one request after another.
      const together = this.options.hosts.forHost(worker.queue.repo.host)?.answersLocally === true;
      for (const decision of decisions) {
        const actions = decision.actions.filter((action) => isHostAction(action) && !superseded.has(action));
        const tried = decision.version <= worker.triedThrough;
        worker.triedThrough = Math.max(worker.triedThrough, decision.version);
        for (const step of hostSteps(actions, together)) {
          if (!(await this.carryOut(worker, step, tried))) return;
        }
        worker.actedThrough = decision.version;
        worker.unacted.shift();
      }
      await engine.advanceCursor(worker.queueId, 'actedThrough', worker.actedThrough);
    }
  }

  /** Host actions carried out together, each retried through host outages; false when this replica must stop acting. */
  /** `tried`: the step may have been carried out before, its answer lost (see QueueWorker.triedThrough). */
  private async carryOut(worker: QueueWorker, step: RunnerAction[], tried = false): Promise<boolean> {
    const what = step.length === 1 ? (step[0] as RunnerAction).type : `${step.length} x ${(step[0] as RunnerAction).type}`;
    this.carrying.set(worker.queueId, { action: what, since: this.now() });
    const watch = watchForSlowAnswer(worker, what, { log: this.options.log, ...(this.options.metrics ? { metrics: this.options.metrics } : {}), now: this.now, report: (input) => this.record(worker.queueId, input) }, this.options.slowAnswerMs);
    let succeeded = false;
    try {
      let left = step;
      if (step.length > 1 && worker.outage === null && (await this.mayAct(worker))) {
        // Tried together once; what failed goes the usual way, one after another (retried through an outage,
        // or its refusal settled). Every action here is safe to repeat.
        const ctx = this.context(worker);
        const outcomes = await Promise.allSettled(step.map((action) => executeHostAction(ctx, action, tried)));
        left = step.filter((_, index) => outcomes[index]?.status === 'rejected');
      }
      for (const action of left) if (!(await this.carryOutOnce(worker, action, tried))) return false;
      succeeded = true;
      return true;
    } finally {
      await watch.settled(succeeded);
      this.carrying.delete(worker.queueId);
    }
  }

  private carryOutOnce(worker: QueueWorker, action: RunnerAction, tried: boolean): Promise<boolean> {
    return carryOutThroughOutages(this.context(worker), action, worker, {
      askedBefore: tried,
      log: this.options.log,
      ...(this.options.metrics ? { metrics: this.options.metrics } : {}),
      now: this.now,
      delayMs: this.options.retryDelayMs ?? retryDelayMs,
      // A stopping runner neither waits nor retries: what is left is carried out by the next writer.
      sleep: (ms) => (this.stopped ? Promise.resolve() : this.sleep(worker.queueId, ms)),
      mayAct: () => this.mayAct(worker),
      report: (input) => this.record(worker.queueId, input),
    });
  }

  /** Whether this replica may still act for the queue (a retry may run long after the lease was last renewed by a decision). */
  private async mayAct(worker: QueueWorker): Promise<boolean> {
    // Valid again after renewing: a renewal that finds another replica held the lease meanwhile drops this worker.
    return !this.stopped && this.leaseValid(worker) && (await this.holdLease(worker.queueId)) !== null && this.leaseValid(worker);
  }

  private sleep(queueId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.sleeping.delete(queueId);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      this.sleeping.set(queueId, { timer, wake });
    });
  }
}

function initialState(queue: QueueRecord): EngineState {
  return { ...initialEngineState(queue.targetBranch, queue.config), requestedState: queue.requestedState };
}

/** Whether the engine holds the queue record's settings (a mode it is switching to counts as held). */
function engineHasSettings(state: EngineState, queue: QueueRecord): boolean {
  // A stored state too broken to read is the round's to find (undecidable): nothing is told to it here.
  if (typeof state?.config !== 'object' || state.config === null) return true;
  // Settings saved in the engine before some existed read as the record reads them (else every such queue would be told
  // once after an upgrade, which lifts its landing block; found by review).
  const held = withStoredDefaults({ ...state.config, mode: state.switchingToMode ?? state.config.mode });
  return state.requestedState === queue.requestedState && canonicalJson(held) === canonicalJson(queue.config);
}

/** JSON with keys sorted and undefined left out: settings compared whatever order or path they were written in. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));
}

/** The engine's queue-wide notes that the queue record shows (written by the runner alone). */
const QUEUE_NOTES = ['hostOutage', 'landingBlocked', 'stalled'] as const;

/** A queue-wide note of the engine's (an outage, a blocked landing, a stall) as the queue record shows it. */
function shownNote(note: { since: number; message: string; nextTryAt?: number } | null | undefined): HostOutage | null {
  return note ? { since: new Date(note.since), message: note.message, ...(note.nextTryAt !== undefined ? { nextTryAt: new Date(note.nextTryAt) } : {}) } : null;
}

/** A blocked landing as shown: with when the queue tries again by itself (engine/landing-block.ts). */
function withNextTry(blocked: EngineState['landingBlocked']): { since: number; message: string; nextTryAt?: number } | null | undefined {
  if (!blocked) return blocked;
  if (blocked.retrying) return { since: blocked.since, message: `${blocked.message} The queue is trying again: its next ${blocked.kind === 'land' ? 'landing' : 'test run built'} says whether it can go on.` };
  if (blocked.retryAt === undefined) return blocked;
  return { since: blocked.since, message: `${blocked.message} The queue tries again by itself at ${new Date(blocked.retryAt).toISOString()} (then less often); updateQueue tries at once.`, nextTryAt: blocked.retryAt };
}

function sameNote(a: HostOutage | null, b: HostOutage | null): boolean {
  return a?.since.getTime() === b?.since.getTime() && a?.message === b?.message && a?.nextTryAt?.getTime() === b?.nextTryAt?.getTime();
}
