import { EtaProbe, etaAccuracy, type EtaAccuracy } from '../src/forecast/eta-probe.js';
import { metricsOf, percentile, type StrategyMetrics } from '../src/simulation/metrics.js';
import type { SimRecord } from '../src/simulation/sim-record.js';
import { simulate } from '../src/simulation/simulator.js';
import type { Strategy } from '../src/simulation/strategy.js';
import { BorsStrategy } from '../src/simulation/strategies/bors-batch-bisect.js';
import { EngineStrategy } from '../src/simulation/strategies/engine-strategy.js';
import { GithubMergeQueueStrategy } from '../src/simulation/strategies/github-merge-queue.js';
import { OracleStrategy } from '../src/simulation/strategies/oracle.js';
import { GitlabMergeTrainStrategy } from '../src/simulation/strategies/gitlab-merge-train.js';
import { MergifyStrategy } from '../src/simulation/strategies/mergify.js';
import { ZuulStrategy } from '../src/simulation/strategies/zuul.js';
import { SerialStrategy } from '../src/simulation/strategies/serial.js';
import { riskCorrelation } from '../src/simulation/risk-hint.js';
import { carelessShares, DEFAULT_AUTHOR_POOL } from '../src/simulation/authors.js';
import { generateWorkload } from '../src/simulation/workload.js';
import { CI_CAPACITY, DEFAULT_ROW, type BenchWorkload } from './queue-workloads.js';

/** Ours with the default configuration, without the PRs' risk hints: what the hints gain (it derives risks from authors instead). */
export const NO_HINTS_ROW = 'ours-no-hints';
/** Ours with the settings tuned for the workload. */
export const TUNED_ROW = 'ours-tuned';
/** The tuned settings with directMergeMode: always, beside ours-tuned: the CI runs direct merge saves. */
export const DIRECT_ROW = 'ours+direct';

/** One workload's results on one seed: every strategy on the same PR stream. */
export interface WorkloadResult {
  workload: string;
  seed: number;
  /** How much the stream's risk hints tell about breakage (point-biserial r). */
  riskCorrelation: number | null;
  /** The careless authors' measured share of the PRs and of the breaking PRs (what ours learns its risks from without hints). */
  authorShares: { prs: number; breaking: number | null };
  /** Median files changed by sound and by breaking PRs (ours learns risks from sizes too without hints). */
  medianChangedFiles: { sound: number | null; breaking: number | null };
  metrics: StrategyMetrics[];
  /** Ours only: the merge ETA given at each submission against the actual merge. */
  eta: EtaAccuracy;
  violations: Record<string, string[]>;
  /** Ours again at each of the workload's hintStudy separations: the same stream, only the hints drawn sharper. */
  hintStudy: HintStudyResult[];
}

/** Ours on one seed with hints drawn at another separation of the risk signal. */
export interface HintStudyResult {
  separation: number;
  riskCorrelation: number | null;
  metrics: StrategyMetrics;
  violations: string[];
}

export function strategiesFor(bench: BenchWorkload, conflicts: Array<[number, number]>): Strategy[] {
  return [
    // The default configuration. The probe measures the ETA shown at submission; it forwards everything, so the run is unchanged.
    new EtaProbe(new EngineStrategy(DEFAULT_ROW, 'ours', true)),
    new EngineStrategy(DEFAULT_ROW, NO_HINTS_ROW),
    new EngineStrategy(bench.tuned, TUNED_ROW),
    // The tuned settings, landing PRs already up to date with their own CI passed without a second run (issue 11, point 3).
    new EngineStrategy({ ...bench.tuned, directMergeMode: 'always' }, DIRECT_ROW),
    new SerialStrategy(),
    new BorsStrategy(),
    new GithubMergeQueueStrategy(CI_CAPACITY),
    new MergifyStrategy(CI_CAPACITY),
    new ZuulStrategy(CI_CAPACITY),
    new GitlabMergeTrainStrategy(CI_CAPACITY),
    new OracleStrategy(conflicts, CI_CAPACITY, bench.lanes),
  ];
}

function medianFiles(prs: Array<{ changedFiles: number }>): number | null {
  return percentile(prs.map((p) => p.changedFiles).sort((a, b) => a - b), 50);
}

/** The default row given hints of another quality; hints draw from a stream of their own, so the PRs and their breakage stay. */
function withHintsAt(bench: BenchWorkload, seed: number, separation: number): HintStudyResult {
  const workload = generateWorkload({ ...bench.spec, riskSeparation: separation }, seed);
  const record = simulate(workload, new EngineStrategy(DEFAULT_ROW, 'ours', true), { seed, capacity: CI_CAPACITY });
  return { separation, riskCorrelation: riskCorrelation(workload.prs), metrics: metricsOf(record), violations: record.violations.slice(0, 5) };
}

export function runWorkload(bench: BenchWorkload, seed: number): WorkloadResult {
  const workload = generateWorkload(bench.spec, seed);
  const strategies = strategiesFor(bench, workload.conflicts);
  const records = strategies.map((s) => simulate(workload, s, { seed, capacity: CI_CAPACITY }));
  const probeAt = strategies.findIndex((s) => s instanceof EtaProbe);
  const probe = strategies[probeAt] as EtaProbe;
  return {
    workload: bench.spec.name,
    seed,
    riskCorrelation: riskCorrelation(workload.prs),
    authorShares: carelessShares(workload.prs, bench.spec.authors ?? DEFAULT_AUTHOR_POOL),
    medianChangedFiles: { sound: medianFiles(workload.prs.filter((p) => !p.breaks)), breaking: medianFiles(workload.prs.filter((p) => p.breaks)) },
    metrics: records.map(metricsOf),
    eta: etaAccuracy(probe.etas, records[probeAt] as SimRecord),
    violations: Object.fromEntries(records.filter((r) => r.violations.length > 0).map((r) => [r.strategy, r.violations.slice(0, 5)])),
    hintStudy: (bench.hintStudy ?? []).map((separation) => withHintsAt(bench, seed, separation)),
  };
}
