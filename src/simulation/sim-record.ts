/** What happened to one PR in a simulation. */
export interface PrRecord {
  number: number;
  arrivesAt: number;
  breaks: boolean;
  mergedAt: number | null;
  ejectedAt: number | null;
  ejectReason: string | null;
}

/** The raw facts of one simulation run, from which metrics are derived. */
export interface SimRecord {
  strategy: string;
  workload: string;
  prs: PrRecord[];
  runsStarted: number;
  runsCancelled: number;
  /** Direct merges: PRs that landed on their own CI's verdict, with no run. */
  runsWithoutCi: number;
  /** CI time used, cancelled runs up to their cancellation included. */
  ciMs: number;
  /** Merged PRs that break the build or conflict with the branch. */
  brokenMerges: number;
  /** Good PRs ejected: they neither break nor conflict with a PR that merged. */
  wronglyEjected: number;
  maxConcurrentRuns: number;
  violations: string[];
  /** Virtual time when the last event was handled. */
  endedAt: number;
}
