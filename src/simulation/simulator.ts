import { ciModel } from './ci-model.js';
import { EventQueue } from './event-queue.js';
import { InvariantChecker } from './invariants.js';
import { deriveRng } from './random.js';
import { SimulatedHost, type SimEvent } from './sim-host.js';
import type { PrRecord, SimRecord } from './sim-record.js';
import type { Strategy } from './strategy.js';
import { HOUR, type SimPr, type Workload } from './workload.js';

export interface SimOptions {
  seed: number;
  /** CI runs allowed at once. */
  capacity: number;
  /** A strategy that has not finished by then is stopped and the rest counted as stuck. */
  horizonHours?: number;
}

/**
 * Plays one workload through one strategy on a virtual clock. Every strategy
 * draws CI outcomes and durations from its own stream of the same seed.
 */
export function simulate(workload: Workload, strategy: Strategy, options: SimOptions): SimRecord {
  const prs = new Map<number, SimPr>(workload.prs.map((pr) => [pr.number, pr]));
  const records = new Map<number, PrRecord>(
    workload.prs.map((pr) => [pr.number, { number: pr.number, arrivesAt: pr.arrivesAt, breaks: pr.breaks, mergedAt: null, ejectedAt: null, ejectReason: null }]),
  );
  const queue = new EventQueue<SimEvent>();
  const checker = new InvariantChecker(prs);
  const model = ciModel(workload.conflicts, workload.spec.runFlakeRate, strategy.seesFlakes);
  const rng = deriveRng(options.seed, `ci:${workload.spec.name}`);
  const host = new SimulatedHost({ workload, model, rng, queue, checker, records, prs, capacity: options.capacity, lanes: strategy.usesLanes });
  for (const pr of workload.prs) queue.push(pr.arrivesAt, { kind: 'arrival', pr });
  strategy.start(host);
  const horizon = (options.horizonHours ?? 10_000) * HOUR;
  for (let next = queue.pop(); next; next = queue.pop()) {
    if (next.at > horizon) {
      checker.record(`still running after ${options.horizonHours ?? 10_000} hours`);
      break;
    }
    host.now = next.at;
    const event = next.event;
    switch (event.kind) {
      case 'arrival':
        host.arrived(event.pr.number);
        strategy.onArrival(event.pr);
        break;
      case 'run_finished':
        if (host.finishRun(event.runId, event.outcome)) strategy.onRunFinished(event.runId, event.outcome);
        break;
      case 'merge_due':
        strategy.onMergeFinished(host.completeMerge(event.runId));
        break;
      case 'timer':
        host.timerFired(next.at);
        strategy.onTimer();
        break;
    }
  }
  const partners = model.conflicts;
  const wronglyEjected = [...records.values()].filter((r) => {
    if (r.ejectedAt === null || r.breaks) return false;
    const conflictsWithMerged = [...(partners.get(r.number) ?? [])].some((p) => records.get(p)?.mergedAt !== null);
    return !conflictsWithMerged;
  }).length;
  return {
    strategy: strategy.name,
    workload: workload.spec.name,
    prs: [...records.values()],
    runsStarted: host.runsStarted,
    runsCancelled: host.runsCancelled,
    runsWithoutCi: host.runsWithoutCi,
    ciMs: host.ciMs,
    brokenMerges: host.brokenMerges,
    wronglyEjected,
    maxConcurrentRuns: host.maxConcurrentRuns,
    violations: checker.violations,
    endedAt: host.now,
  };
}
