import { tuningOf } from '../engine/tuning.js';
import { MINUTE_MS, type EngineEntry, type EngineRun, type EngineState } from '../engine/model.js';
import { isQueued, queueOrder } from '../engine/order.js';
import { entryIndex } from '../engine/entry-index.js';
import { DEFAULT_CI_HISTORY, type CiHistory } from './ci-history.js';
import { Lanes, type LaneMark } from './lanes.js';

/** Estimated merge time (epoch ms) of each queued entry, by entry id. */
export type MergeForecast = Map<string, number>;

/**
 * When each queued PR should merge, from the engine's state, the queue's recent
 * CI history and the time. Pure: no clock, no I/O, no randomness; linear in the
 * queue's length after its ordering (`order`: queueOrder(state), which the
 * writer has from the decision that made the state instead of sorting again).
 *
 * The model, deliberately simple (its error is measured in bench/queue-bench.ts):
 * - a PR in a running run finishes when the run has run for the median CI duration
 *   (not before now); one whose run passed merges now, or when what is ahead of it does;
 * - PRs not yet tested are cut into the units the engine would form (batches of
 *   batchCapacity, bisection halves, noBatch PRs alone; in a parallel queue a batch
 *   per lane, of PRs whose targets overlap) and each unit takes the next free CI slot of `concurrency` for one duration;
 *   a partial last batch waits for batchingMaxWaitTimeMinutes like the engine does;
 * - every unit ahead fails with the recent failure rate, and a failure costs the PRs
 *   behind it in its lane the CI slots thrown away (runs behind are rebuilt: on average
 *   half the chain's progress, plus the bisection runs of a batch); a PR's own batch
 *   failing costs it one more run;
 * - a PR never merges before one its run builds on: in a single queue the ETAs follow
 *   queue order; in a parallel queue they follow lanes (overlapping impacted targets).
 *
 * No ETA (the map omits the entry): NOT_READY entries; every entry of a PAUSED queue
 * or one whose landing is blocked (both wait for an operator, so no time can be given);
 * PRs not yet tested in a DRAINING queue (nothing new starts). A host outage, a
 * branch head being re-read or a mode switch in progress only delay starts: the ETAs
 * assume they clear now (mode switch: once the runs in flight end), a lower bound.
 */
export function forecastMerges(state: EngineState, history: CiHistory, now: number, order: readonly EngineEntry[] = queueOrder(state)): MergeForecast {
  const forecast: MergeForecast = new Map();
  if (state.requestedState === 'PAUSED' || state.landingBlocked) return forecast;
  const { config } = state;
  const tuning = tuningOf(state);
  const duration = Number.isFinite(history.ciDurationMs) && history.ciDurationMs > 0 ? history.ciDurationMs : DEFAULT_CI_HISTORY.ciDurationMs;
  const failureRate = Number.isFinite(history.failureRate) ? Math.min(1, Math.max(0, history.failureRate)) : DEFAULT_CI_HISTORY.failureRate;
  const concurrency = Math.max(1, config.concurrency);
  const single = (state.switchingToMode ?? config.mode) === 'single';
  // The engine's own index of the entries (kept across decisions), not a Map of the order built here: at 4,500 PRs
  // that build was a quarter of the forecast's time. In the order means admitted (queueOrder leaves NOT_READY out).
  const entries = entryIndex(state.entries);
  const queuedEntry = (id: string) => {
    const entry = entries.get(id);
    return entry && isQueued(entry) ? entry : undefined;
  };

  const runOfEntry = new Map<string, EngineRun>();
  const failedIds = new Set<string>();
  for (const run of state.runs) {
    for (const head of run.unit) {
      runOfEntry.set(head.entryId, run);
      if (run.status === 'failed') failedIds.add(head.entryId);
    }
  }
  // A run built on a PR that failed is rebuilt once that failure is decided, unless a pass
  // of it may prove the PR (optimistic merging): its PRs are as good as untested.
  const doomed = (run: EngineRun) => run.status === 'running' && !tuning.canOptimisticallyMerge && run.ahead.some((h) => failedIds.has(h.entryId));
  // What a passed run contains merges with it: the run being merged, and with optimistic
  // merging (single queues) any passed run, which lands everything ahead of it at once.
  const mergesNow = new Set<string>();
  for (const run of state.runs) {
    const landsAll = run.id === state.mergingRunId || (single && tuning.canOptimisticallyMerge && run.status === 'passed');
    if (landsAll) for (const head of [...run.ahead, ...run.unit]) mergesNow.add(head.entryId);
  }

  const finishOf = (run: EngineRun) => Math.max(now, run.startedAt + duration);
  const running = state.runs.filter((r) => r.status === 'running' && !doomed(r));
  // Nothing new starts during a mode switch until the runs in flight end.
  const earliest = state.switchingToMode ? Math.max(now, ...running.map(finishOf)) : now;
  // A probe (engine/probes.ts) holds its slot until it finishes or its batch does (then it is cancelled).
  const batchOf = new Map(running.map((run) => [run.id, run]));
  const probing = (state.probes ?? []).filter((p) => p.status === 'running').map((p) => {
    const batch = p.probeOf ? batchOf.get(p.probeOf) : undefined;
    return batch ? Math.min(finishOf(p), finishOf(batch)) : finishOf(p);
  });
  const slots = new CiSlots(concurrency, duration, [...running.map(finishOf), ...probing], earliest);

  const lanes = new Lanes(single);
  // Slots of CI a failure costs the PRs behind it: the runs in flight behind it are rebuilt,
  // on average half-way through the chain; a batch is bisected into parts, and the culprit's
  // part fails again, so it costs its parts' runs and a second rebuild.
  const chainLoss = (concurrency - 1) / 2;
  const failureCost = (size: number) => (size > 1 ? 2 * chainLoss + Math.min(size, Math.max(2, tuning.bisectionConcurrency)) : chainLoss);

  /** Gives a unit its ETA from its own finish, the lane ahead of it and the failures expected there. */
  const place = (unit: EngineEntry[], finish: number, failure: number, ownFailure: number) => {
    if (unit.length === 0) return;
    // What every PR of the unit waits for (in a parallel queue each member's lane may reach further back).
    const ahead = unit.map((e) => lanes.before(e)).reduce((a, b) => ({ eta: Math.max(a.eta, b.eta), penalty: Math.max(a.penalty, b.penalty) }));
    const delayed = finish + (ahead.penalty * duration) / concurrency + (unit.length > 1 ? ownFailure * duration : 0);
    const eta = Math.max(delayed, ahead.eta);
    for (const entry of unit) forecast.set(entry.id, eta);
    const mark: LaneMark = { eta, penalty: ahead.penalty + failure * failureCost(unit.length) };
    for (const entry of unit) lanes.after(entry, mark);
  };

  /** Schedules a batch; a partial one waits for more PRs unless something closes it. */
  const schedule = (members: EngineEntry[], closed: boolean) => {
    const first = members[0];
    if (!first) return;
    let notBefore = earliest;
    if (!closed && !first.unitKey && members.length < tuning.batchingMinSize) {
      const oldest = Math.min(...members.map((e) => e.admittedAt ?? now));
      notBefore = Math.max(notBefore, oldest + tuning.batchingMaxWaitMinutes * MINUTE_MS);
    }
    place(members, slots.take(notBefore), failureRate, failureRate);
  };
  const capacityOf = (entry: EngineEntry) => (entry.noBatch ? 1 : entry.unitKey ? Number.POSITIVE_INFINITY : tuning.expectedBatchSize);

  // A single queue forms one batch at a time, in line.
  let batch: EngineEntry[] = [];
  let capacity = 1;
  const flush = (closed: boolean) => {
    schedule(batch, closed);
    batch = [];
  };
  // A parallel queue forms a batch per lane: a PR joins the open batch whose PRs its targets overlap.
  const laneBatches: LaneBatch[] = [];
  /** Lane batches a PR depends on close before it is placed: it never merges before them. */
  const closeBatchesOf = (entry: EngineEntry, touching = laneBatches.filter((b) => b.touches(entry))) => {
    for (const open of touching) {
      schedule(open.members, true);
      laneBatches.splice(laneBatches.indexOf(open), 1);
    }
  };

  const placedRuns = new Set<EngineRun>();
  const startsNew = state.requestedState === 'RUNNING';
  for (const entry of order) {
    const run = runOfEntry.get(entry.id);
    if (mergesNow.has(entry.id)) {
      flush(true);
      closeBatchesOf(entry);
      const ahead = lanes.before(entry);
      const eta = Math.max(now, ahead.eta);
      forecast.set(entry.id, eta);
      lanes.after(entry, { eta, penalty: ahead.penalty });
      continue;
    }
    if (run && !doomed(run)) {
      flush(true);
      closeBatchesOf(entry);
      if (placedRuns.has(run)) continue;
      placedRuns.add(run);
      const unit = run.unit.map((h) => queuedEntry(h.entryId)).filter((e): e is EngineEntry => e !== undefined && !mergesNow.has(e.id));
      if (run.status === 'running') place(unit, finishOf(run), failureRate, failureRate);
      else if (run.status === 'passed') place(unit, now, 0, 0);
      // Failed, not yet decided: if it merges at all, a run behind or a retest proves it.
      // Rebuilds behind it are counted where runs are built on it (doomed) or here (optimistic).
      else place(unit, now + duration, tuning.canOptimisticallyMerge ? 1 : 0, 0);
      continue;
    }
    if (!startsNew) continue;
    if (!single) {
      // Its lane's open batches: it joins the one it overlaps if it can; otherwise they close first (the engine ends a batch there).
      const overlapping = laneBatches.filter((b) => b.touches(entry));
      const [only] = overlapping;
      const joins = overlapping.length === 1 && only && !entry.noBatch && only.members.length < only.capacity && only.members[0]?.unitKey === entry.unitKey;
      if (joins) only.add(entry);
      else {
        closeBatchesOf(entry, overlapping);
        laneBatches.push(new LaneBatch(entry, capacityOf(entry)));
      }
      const current = joins ? only : (laneBatches.at(-1) as LaneBatch);
      if (current.members.length >= current.capacity) {
        schedule(current.members, true);
        laneBatches.splice(laneBatches.indexOf(current), 1);
      }
      continue;
    }
    const first = batch[0];
    if (first && !entry.noBatch && entry.unitKey === first.unitKey && batch.length < capacity) {
      batch.push(entry);
      continue;
    }
    flush(true);
    batch = [entry];
    capacity = capacityOf(entry);
    if (batch.length >= capacity) flush(true);
  }
  flush(false);
  for (const open of laneBatches) schedule(open.members, false);
  // A single queue lands in queue order (each run holds everything ahead of it), a parallel
  // one in lane order: no PR merges before one ahead of it in its lane, whatever its own
  // run's timing (e.g. it is tested already, or batched with a PR ahead, while an urgent
  // PR that passed it waits for a slot).
  const floors = new Lanes(single);
  for (const entry of order) {
    const eta = forecast.get(entry.id);
    if (eta === undefined) continue;
    const floor = Math.max(eta, floors.before(entry).eta);
    forecast.set(entry.id, floor);
    floors.after(entry, { eta: floor, penalty: 0 });
  }
  return forecast;
}

/**
 * An open batch of one lane in a parallel queue, with the union of its PRs' targets: whether a PR overlaps any of
 * its members is one look per target of the PR's, not one comparison per member (at 10,000 PRs in seven lanes the
 * member by member test was most of the forecast: 26 ms of it).
 */
class LaneBatch {
  readonly members: EngineEntry[] = [];
  /** The members' targets; `wide`: a member with unknown or ALL targets, which overlaps everything. */
  private readonly targets = new Set<string>();
  private wide = false;

  constructor(
    first: EngineEntry,
    readonly capacity: number,
  ) {
    this.add(first);
  }

  add(entry: EngineEntry): void {
    this.members.push(entry);
    const targets = entry.targets?.targets;
    if (!targets || targets === 'ALL') this.wide = true;
    else for (const target of targets) this.targets.add(target);
  }

  /** Whether the PR overlaps a member (engine/content.ts overlaps: unknown or ALL targets overlap everything). */
  touches(entry: EngineEntry): boolean {
    const targets = entry.targets?.targets;
    if (this.wide || !targets || targets === 'ALL') return true;
    return targets.some((target) => this.targets.has(target));
  }
}

/**
 * The queue's CI slots: when each next frees. All runs take the same duration, so
 * taking them in turn is taking the earliest free one.
 */
class CiSlots {
  private readonly freeAt: number[];
  private next = 0;

  constructor(
    private readonly count: number,
    private readonly duration: number,
    busyUntil: number[],
    earliest: number,
  ) {
    const busy = busyUntil.slice().sort((a, b) => a - b).slice(0, count);
    this.freeAt = [...Array.from({ length: count - busy.length }, () => earliest), ...busy.map((t) => Math.max(t, earliest))].sort((a, b) => a - b);
  }

  /** The finish time of a run started in the next free slot, no earlier than `notBefore`. */
  take(notBefore: number): number {
    const k = this.next++ % this.count;
    const finish = Math.max(this.freeAt[k] as number, notBefore) + this.duration;
    this.freeAt[k] = finish;
    return finish;
  }
}
