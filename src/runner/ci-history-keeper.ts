import type { TestRunRecord } from '../domain/records.js';
import { ciHistoryOf, ciSamples, type CiHistory, type CiSample } from '../forecast/ci-history.js';

/** The queue's CI over the last day: the samples of its finished runs and the history they give. */
export interface KeptCiHistory {
  samples: CiSample[];
  history: CiHistory;
}

/**
 * The CI history one queue's writer keeps for its forecast. Read from the database at most every `ttlMs` (runs
 * leave the day's window; an earlier writer recorded some), and between reads added to by each run result the
 * writer records. It used to be read again after each such run: on the local FerretDB that query reads every
 * recent run whole (a run lists its PRs), and with two queues landing all day it took most of the database's time
 * (755 ms a read, 8 reads a second).
 *
 * A read is kept only if no recording of run results overlapped it: one begun before a recording may miss its
 * runs, and one made while a recording is under way may already find them, which adding them afterwards would
 * count twice. Either way the read still answers the caller that made it.
 */
export class CiHistoryKeeper {
  private kept: (KeptCiHistory & { readAt: number }) | null = null;
  /** Counts the recordings of run results begun and ended: a read that saw it move is not kept. */
  private changes = 0;
  /** Recordings of run results under way. */
  private recording = 0;

  constructor(
    private readonly readRuns: () => Promise<readonly TestRunRecord[]>,
    private readonly now: () => number,
    private readonly ttlMs: number,
  ) {}

  /** The history as kept, or read again when it is older than the TTL. */
  async current(): Promise<KeptCiHistory> {
    const now = this.now();
    if (this.kept && now - this.kept.readAt <= this.ttlMs) return this.kept;
    const changes = this.changes;
    const samples = ciSamples(await this.readRuns());
    const read = { readAt: now, samples, history: ciHistoryOf(samples) };
    if (this.changes === changes && this.recording === 0) this.kept = read;
    return read;
  }

  /** A decision that records run results (a result, a time-out) begins recording them. */
  recordingRuns(): void {
    this.recording++;
    this.changes++;
  }

  /** ...and recorded these, finished: they join the kept history without a read. */
  recordedRuns(finished: readonly TestRunRecord[]): void {
    this.recording = Math.max(0, this.recording - 1);
    this.changes++;
    if (!this.kept || finished.length === 0) return; // Nothing kept: the next read has them.
    const samples = [...this.kept.samples, ...ciSamples(finished)];
    this.kept = { readAt: this.kept.readAt, samples, history: ciHistoryOf(samples) };
  }
}
