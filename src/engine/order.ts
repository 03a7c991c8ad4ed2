import { overlaps, token } from './content.js';
import { MINUTE_MS, type AppliedHead, type EngineEntry, type EngineRun, type EngineState } from './model.js';
import { observedFailureRate, tuningOf } from './tuning.js';

/** Places in line: a run's seq times this, plus the PR's index in the run. */
export const PLACES_PER_RUN = 1_000;

/** The run deciding this entry now, if any. */
export function runOf(state: EngineState, entryId: string): EngineRun | undefined {
  return state.runs.find((run) => run.unit.some((head) => head.entryId === entryId));
}

/** In the queue proper: admitted, possibly testing. NOT_READY entries have no place yet. */
export function isQueued(entry: EngineEntry): boolean {
  return entry.state !== 'NOT_READY';
}

/**
 * How far back in line a PR not yet tested goes for its chance of breaking:
 * safer PRs submitted up to this long after a certain failure go first (and
 * batch together), so a risky PR fails alone, later in the chain, where it
 * costs least; bounded, so it still has its turn.
 */
const RISK_DEFERRAL_MS = 60 * MINUTE_MS;

/** By priority, then submission time moved by risk, then id; each key computed once, not once per comparison. */
function sortFifo(entries: EngineEntry[], rate: number): EngineEntry[] {
  const keyed = entries.map((e) => ({ e, key: e.submittedAt + (e.risk === undefined ? 0 : e.risk - rate) * RISK_DEFERRAL_MS }));
  keyed.sort((a, b) => a.e.priority - b.e.priority || a.key - b.key || (a.e.id < b.e.id ? -1 : a.e.id > b.e.id ? 1 : 0));
  return keyed.map((k) => k.e);
}

/**
 * Queue order. Urgent PRs first (they may interrupt runs); then PRs that have
 * a place in line, in that order (priority never reorders what is testing or
 * was, and a PR whose run was dropped goes back to its place); then PRs not yet
 * tested, by priority, then FIFO.
 */
export function queueOrder(state: EngineState): EngineEntry[] {
  const urgent: EngineEntry[] = [];
  const placed: EngineEntry[] = [];
  const waiting: EngineEntry[] = [];
  for (const e of state.entries) {
    if (!isQueued(e)) continue;
    if (e.priority === 0) urgent.push(e);
    else if (e.place !== null) placed.push(e);
    else waiting.push(e);
  }
  const rate = observedFailureRate(state);
  placed.sort((a, b) => (a.place as number) - (b.place as number));
  return [...sortFifo(urgent, rate), ...placed, ...sortFifo(waiting, rate)];
}

/**
 * Whether runs behind this entry should include it. A PR whose run failed is
 * kept in them only while its failure may still be excused: a later passing
 * run that contains it (optimistic merge) or the runs behind it we wait for.
 */
export function expectedToMerge(state: EngineState, entry: EngineEntry): boolean {
  const run = runOf(state, entry.id);
  if (run?.status === 'passed') return true;
  if (run?.status === 'failed') {
    const tuning = tuningOf(state);
    // A vouched PR's retry (failures.ts) keeps it in the chain only if it is not likely to break: one that is would be
    // left out of the runs behind once retried, and they would be built twice.
    return tuning.canOptimisticallyMerge || tuning.pendingFailureDepth > 0 || (vouchedRetryDue(state, entry, run) && !likelyToBreak(entry));
  }
  // Bet against a PR predicted to break: runs behind it are built without it.
  return !likelyToBreak(entry);
}

/**
 * A PR a passed run vouched for, whose own run failed its checks alone for the
 * first time: failures.ts retry() tests it again, in the chain. Until then the
 * runs behind keep betting on it, so the passed run that vouched for it stands
 * rather than being rebuilt and tested again.
 */
export function vouchedRetryDue(state: EngineState, entry: EngineEntry, run: EngineRun): boolean {
  return state.config.tuning === 'adaptive' && entry.vouched === true && (entry.retries ?? 0) === 0 && run.unit.length === 1 && (run.failureReason ?? 'failed_tests') === 'failed_tests';
}

/** Its risk says it is likely enough to break that runs behind should not bet on it (and no pass has answered that yet). */
export function likelyToBreak(entry: EngineEntry): boolean {
  return (entry.risk ?? 0) >= LIKELY_BREAK;
}

/**
 * Below even odds: a PR that breaks sinks every run built on it (up to
 * concurrency - 1 of them), one that was wrongly bet against costs one more
 * run of its own. On bench/queue-tune-default.ts's seeds 6-15, 0.4 gave a mean
 * p95 in queue of 153 min in (a) against 191 at 0.5 (159 at 0.3), 556 against
 * 634 in (f) and 749 against 854 in (d); (c) 92 against 88.
 */
export const LIKELY_BREAK = 0.4;

/**
 * What a unit starting at `index` of `order` must be tested on top of: in a
 * single queue every PR ahead still expected to merge; in a parallel queue only
 * those its impacted targets depend on, directly or through another PR.
 * `undecidedToo`: also the PRs ahead it is built without (failed, or
 * predicted to break): what must be decided before it may land.
 */
export function aheadOf(state: EngineState, order: EngineEntry[], index: number, unit: EngineEntry[], undecidedToo = false): EngineEntry[] {
  const candidates = order.slice(0, index).filter((e) => (undecidedToo || expectedToMerge(state, e)) && !unit.includes(e));
  if (state.config.mode === 'single') return candidates;
  const lane = [...unit];
  const found: EngineEntry[] = [];
  for (let i = candidates.length - 1; i >= 0; i--) {
    const candidate = candidates[i] as EngineEntry;
    if (lane.some((member) => overlaps(candidate, member))) {
      found.push(candidate);
      lane.push(candidate);
    }
  }
  return found.reverse();
}

export function headsOf(entries: EngineEntry[]): AppliedHead[] {
  return entries.map((e) => ({ entryId: e.id, headSha: e.facts?.headSha ?? '' }));
}

export function tokens(heads: AppliedHead[]): string[] {
  return heads.map(token);
}
