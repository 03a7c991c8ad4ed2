import type { PullRequestState, StateChangeReason } from '../domain/pull-request-state.js';
import type { EmittedEvent, EngineAction, EngineEntry, EngineRun, EngineState } from './model.js';
import { authorOutcome, recordAuthorOutcome } from './author-risk.js';
import { recordSizeOutcome } from './size-risk.js';
import { queueOrder, runOf } from './order.js';
import { withOutcome } from './outcomes.js';
import { entriesInOrder, entryIndex, withoutEntry } from './entry-index.js';

/** Concluded PRs the queue's break rate is taken over. */
const RECENT_OUTCOMES_KEPT = 50;

/** Why an entry changed state in this decision, when the default reason would be wrong. */
export interface Hint {
  reason: StateChangeReason;
  detail?: string;
}

/**
 * The working copy of one decision: the next state, the actions so far, and
 * the reasons behind state changes. Only decide() creates one.
 */
export class DecisionContext {
  readonly actions: EngineAction[] = [];
  readonly hints = new Map<string, Hint>();
  /** The earliest time decide() must run again (batch waits, timeouts). */
  wakeAt: number | null = null;
  /**
   * States before this decision (or as last published in it) of the entries it may have changed: those in a run
   * when it began, and any other just before its first change (noteBefore). Every other entry is PENDING or
   * NOT_READY outside any run, as the last publish left it, and stays so: a decision costs the entries it
   * touches, not a pass over the queue.
   */
  private readonly before = new Map<string, PullRequestState>();
  /** Entries this decision added: they had no state before it. */
  private readonly added = new Set<string>();
  private readonly admissionChangedIds = new Set<string>();
  private admissionChangedAll = false;
  /**
   * Counts changes to entries that settle's fixed point depends on (admissions,
   * demotions, places, bisection keys). With the runs, the merge in flight and
   * the actions, it tells settle whether a round moved anything, without
   * walking the whole queue.
   */
  changes = 0;
  /** Something moved in this decision (a run finished, a PR concluded); runs started are seen by their sequence. */
  progressed = false;
  private ordered: { entries: EngineEntry[]; length: number; changes: number; order: EngineEntry[] } | null = null;

  constructor(
    readonly state: EngineState,
    /** The time of the event being applied; settle runs at the latest event's (see decideAllInPlace). */
    public now: number,
  ) {
    const index = entryIndex(state.entries);
    for (const run of state.runs) {
      // A run stored broken (no unit) is left to the event that touches it, which is then named (EventNotApplied).
      if (!Array.isArray(run.unit)) continue;
      for (const head of run.unit) {
        const entry = index.get(head.entryId);
        if (entry && !this.before.has(entry.id)) this.before.set(entry.id, entry.state);
      }
    }
  }

  /** The entry's state before this decision (or as last published in it); undefined for an entry it added. */
  stateBefore(entry: EngineEntry): PullRequestState | undefined {
    if (this.before.has(entry.id)) return this.before.get(entry.id);
    return this.added.has(entry.id) ? undefined : entry.state;
  }

  /** Call before changing an entry's state outside publish: its state before the decision is kept for publish. */
  noteBefore(entry: EngineEntry): void {
    if (!this.before.has(entry.id) && !this.added.has(entry.id)) this.before.set(entry.id, entry.state);
  }

  /** An entry this decision added (admission looks at it). Added again after it concluded in this decision, it is new: what it was before does not count. */
  noteAdded(entryId: string): void {
    this.before.delete(entryId);
    this.added.add(entryId);
    this.admissionChangedIds.add(entryId);
  }

  /** Entries that may have a state to publish besides those in a run: in a run when the decision began, changed, added or hinted. */
  touchedIds(): string[] {
    return [...this.before.keys(), ...this.added, ...this.hints.keys()];
  }

  /** An entry's facts or targets changed: admission looks at it again. */
  admissionInputsChanged(entry: EngineEntry): void {
    this.admissionChangedIds.add(entry.id);
  }

  /** The queue's settings changed (branch, mode, method): admission looks at every entry again. */
  allAdmissionInputsChanged(): void {
    this.admissionChangedAll = true;
  }

  /**
   * The entries admission must look at, in queue-array order: those whose facts, targets or queue settings
   * changed in this decision. Admission is a function of those alone, so every other entry is as the last
   * decision left it.
   */
  admissionCandidates(): readonly EngineEntry[] {
    return this.admissionChangedAll ? this.state.entries : entriesInOrder(this.state.entries, this.admissionChangedIds);
  }

  entry(id: string): EngineEntry | undefined {
    return entryIndex(this.state.entries).get(id);
  }

  /** Queue order, computed once until an entry is added, removed, admitted, demoted or placed. */
  order(): EngineEntry[] {
    const { entries } = this.state;
    const cached = this.ordered;
    if (cached && cached.entries === entries && cached.length === entries.length && cached.changes === this.changes) return cached.order;
    const order = queueOrder(this.state);
    this.ordered = { entries, length: entries.length, changes: this.changes, order };
    return order;
  }

  /** A change to an entry's admission, place or unit: settle goes round again, the order is recomputed. */
  entryChanged(): void {
    this.changes++;
  }

  entryByPr(prNumber: number): EngineEntry | undefined {
    return this.state.entries.find((e) => e.prNumber === prNumber);
  }

  hint(entryId: string, reason: StateChangeReason, detail?: string): void {
    this.hints.set(entryId, detail ? { reason, detail } : { reason });
  }

  /** Publishes a state change that later steps of this decision may build on. */
  publishNow(entry: EngineEntry, reason: StateChangeReason): void {
    if (this.stateBefore(entry) === entry.state) return;
    this.actions.push({ type: 'publish_status', entryId: entry.id, prNumber: entry.prNumber, state: entry.state, reason });
    if (entry.state === 'PENDING') this.emit({ type: 'pull_request.queued', prNumbers: [entry.prNumber], reason });
    this.before.set(entry.id, entry.state);
  }

  wakeNoLaterThan(at: number): void {
    if (at > this.now && (this.wakeAt === null || at < this.wakeAt)) this.wakeAt = at;
  }

  emit(event: Omit<EmittedEvent, 'seq'>): void {
    // States saved before events were numbered start at 1.
    const seq = this.state.nextEventSeq ?? 1;
    this.state.nextEventSeq = seq + 1;
    this.actions.push({ type: 'emit', event: { ...event, seq } });
  }

  /** Forgets a run; a running one is cancelled. Its PRs go back to waiting. */
  dropRun(run: EngineRun, reason: StateChangeReason): void {
    // A merge already requested cannot be taken back: its outcome decides the run.
    if (this.state.mergingRunId === run.id) return;
    if (run.status === 'running') this.actions.push({ type: 'cancel_run', runId: run.id });
    this.state.runs = this.state.runs.filter((r) => r !== run);
    for (const head of run.unit) {
      const entry = this.entry(head.entryId);
      if (entry && entry.state !== 'NOT_READY') {
        this.noteBefore(entry);
        entry.state = 'PENDING';
        if (!this.hints.has(entry.id)) this.hint(entry.id, reason);
      }
    }
  }

  /** Whether the entry's head is in the run whose merge is being carried out (as one of its PRs, or one ahead): that cannot be taken back (see conclude). */
  inLandingInFlight(entryId: string): boolean {
    const merging = this.state.mergingRunId === null ? undefined : this.state.runs.find((r) => r.id === this.state.mergingRunId);
    return merging !== undefined && [...merging.ahead, ...merging.unit].some((head) => head.entryId === entryId);
  }

  /** Takes an entry out of the queue for good, with the reason it ends. */
  conclude(entryId: string, state: 'MERGED' | 'FAILED' | 'CANCELLED', reason: StateChangeReason, detail?: string, decidedBy?: EngineRun): void {
    const entry = this.entry(entryId);
    if (!entry) return;
    // Its landing is being carried out and cannot be taken back (dropRun): whether it lands decides. Anything else
    // that ends it meanwhile (a cancel, a push, a close) applies only if it does not land (apply-event merge_finished);
    // concluded now, the PR would land while the queue said CANCELLED (found by review).
    if (state !== 'MERGED' && this.inLandingInFlight(entryId)) {
      entry.unlessLanded ??= { state, reason, ...(detail ? { detail } : {}) };
      return;
    }
    const run = runOf(this.state, entryId) ?? decidedBy;
    if (run && state !== 'MERGED' && this.state.runs.includes(run)) {
      // The run tested this PR with others: they are tested again without it.
      this.dropRun(run, 'rebuilt');
    }
    this.state.entries = withoutEntry(this.state.entries, entry);
    this.progressed = true;
    if (state !== 'CANCELLED') this.state.recentOutcomes = withOutcome(this.state.recentOutcomes, state === 'FAILED' ? 1 : 0, RECENT_OUTCOMES_KEPT);
    const outcome = authorOutcome(state, reason);
    if (outcome !== null && entry.facts?.author !== undefined) recordAuthorOutcome(this.state, entry.facts.author, outcome);
    if (outcome !== null && entry.facts?.changedFiles !== undefined) recordSizeOutcome(this.state, entry.facts.changedFiles, outcome);
    this.actions.push({ type: 'publish_status', entryId, prNumber: entry.prNumber, state, reason, ...(detail ? { detail } : {}), ...(run ? { runId: run.id } : {}) });
    const type = state === 'MERGED' ? 'pull_request.merged' : state === 'FAILED' ? 'pull_request.failed' : 'pull_request.canceled';
    this.emit({ type, prNumbers: [entry.prNumber], reason, ...(run ? { runId: run.id } : {}) });
  }
}
