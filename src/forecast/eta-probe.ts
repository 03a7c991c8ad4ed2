import type { EngineState } from '../engine/model.js';
import type { CiOutcome } from '../simulation/ci-model.js';
import { percentile } from '../simulation/metrics.js';
import type { SimRecord } from '../simulation/sim-record.js';
import type { EngineStrategy } from '../simulation/strategies/engine-strategy.js';
import type { MergeRequest, MergeResult, SimHost, Strategy } from '../simulation/strategy.js';
import { MINUTE, type SimPr } from '../simulation/workload.js';
import { ciHistoryOf, DEFAULT_CI_HISTORY, type CiHistory, type CiSample } from './ci-history.js';
import { forecastMerges } from './merge-forecast.js';

/** How the ETAs given at submission compared with the merges that followed. */
export interface EtaAccuracy {
  /** Merged PRs that had an ETA at submission. */
  measured: number;
  /** |ETA − merge|, minutes. */
  medianAbsErrorMinutes: number | null;
  p90AbsErrorMinutes: number | null;
  /** Median of ETA − merge, minutes: positive when the forecast was late (pessimistic). */
  medianBiasMinutes: number | null;
}

export interface EtaProbeOptions {
  /** History assumed before any run finished. */
  fallback?: CiHistory;
  /** How many recent finished runs the history is taken from. */
  window?: number;
}

const DEFAULT_WINDOW = 100;

/**
 * Our engine in the simulator, unchanged, plus the ETA a user would be shown at
 * submission: the forecast from the engine's state right after the submit and the
 * CI history the queue has seen so far (its finished runs' durations and failures).
 * It forwards every call as is and draws nothing at random, so the simulation is
 * the same with or without it.
 */
export class EtaProbe implements Strategy {
  readonly name: string;
  readonly usesLanes: boolean;
  readonly seesFlakes: boolean;
  /** PR number → ETA given at submission (virtual ms). */
  readonly etas = new Map<number, number>();
  private readonly samples: CiSample[] = [];
  private readonly startedAt = new Map<string, number>();
  private host!: SimHost;

  constructor(
    private readonly inner: EngineStrategy,
    private readonly options: EtaProbeOptions = {},
  ) {
    this.name = inner.name;
    this.usesLanes = inner.usesLanes;
    this.seesFlakes = inner.seesFlakes;
  }

  start(host: SimHost): void {
    this.host = host;
    const startedAt = this.startedAt;
    const watched: SimHost = {
      get now() {
        return host.now;
      },
      get baseSha() {
        return host.baseSha;
      },
      startRun(baseSha: string, prs: readonly number[]): string {
        const runId = host.startRun(baseSha, prs);
        startedAt.set(runId, host.now);
        return runId;
      },
      cancelRun(runId: string): void {
        startedAt.delete(runId);
        host.cancelRun(runId);
      },
      // No CI spent: not a sample of CI durations.
      runWithoutCi: (baseSha: string, pr: number) => host.runWithoutCi(baseSha, pr),
      merge: (request: MergeRequest) => host.merge(request),
      wakeAt: (at: number) => host.wakeAt(at),
      eject: (prNumber: number, reason: string) => host.eject(prNumber, reason),
    };
    this.inner.start(watched);
  }

  onArrival(pr: SimPr): void {
    this.inner.onArrival(pr);
    const state = engineStateOf(this.inner);
    const entry = state.entries.find((e) => e.prNumber === pr.number);
    if (!entry) return;
    const history = ciHistoryOf(this.samples.slice(-(this.options.window ?? DEFAULT_WINDOW)), this.options.fallback ?? DEFAULT_CI_HISTORY);
    const eta = forecastMerges(state, history, this.host.now).get(entry.id);
    if (eta !== undefined) this.etas.set(pr.number, eta);
  }

  onRunFinished(runId: string, outcome: CiOutcome): void {
    const started = this.startedAt.get(runId);
    if (started !== undefined) {
      this.startedAt.delete(runId);
      this.samples.push({ durationMs: this.host.now - started, failed: outcome.kind !== 'passed' });
    }
    this.inner.onRunFinished(runId, outcome);
  }

  onMergeFinished(result: MergeResult): void {
    this.inner.onMergeFinished(result);
  }

  onTimer(): void {
    this.inner.onTimer();
  }
}

/**
 * The engine state EngineStrategy keeps (a private field: the strategy exposes none).
 * Checked, so a renamed field fails loudly instead of measuring nothing.
 */
function engineStateOf(strategy: EngineStrategy): EngineState {
  const state = (strategy as unknown as { state?: EngineState }).state;
  if (!state || !Array.isArray(state.entries)) throw new Error('EngineStrategy no longer keeps its engine state in `state`');
  return state;
}

/** Compares the ETAs given at submission with the merges the simulation recorded. */
export function etaAccuracy(etas: ReadonlyMap<number, number>, record: SimRecord): EtaAccuracy {
  const signed: number[] = [];
  for (const pr of record.prs) {
    const eta = etas.get(pr.number);
    if (eta !== undefined && pr.mergedAt !== null) signed.push((eta - pr.mergedAt) / MINUTE);
  }
  const absolute = signed.map(Math.abs).sort((a, b) => a - b);
  return {
    measured: signed.length,
    medianAbsErrorMinutes: percentile(absolute, 50),
    p90AbsErrorMinutes: percentile(absolute, 90),
    medianBiasMinutes: percentile(signed.sort((a, b) => a - b), 50),
  };
}
