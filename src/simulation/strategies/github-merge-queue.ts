import type { CiOutcome } from '../ci-model.js';
import type { MergeResult, SimHost, Strategy } from '../strategy.js';
import type { SimPr } from '../workload.js';

interface Build {
  runId: string;
  /** Everything the build tests, from the root: the tip when it started plus the entries up to its own. */
  content: string;
  status: 'running' | 'passed' | 'failed';
}

interface Entry {
  pr: number;
  build: Build | null;
}

/**
 * GitHub's merge queue: the first `depth` entries each get a merge group
 * built on the tip plus every entry ahead. A failed entry is ejected once it
 * reaches the front, and every build behind it is rebuilt without it; a
 * passing later build merges the entries ahead with it (failing ones too:
 * "only merge non-failing pull requests" off, its flake tolerance). No lanes,
 * no batches: one build per entry.
 */
export class GithubMergeQueueStrategy implements Strategy {
  readonly name = 'github-mq';
  readonly usesLanes = false;
  readonly seesFlakes = true;
  private host!: SimHost;
  private entries: Entry[] = [];
  private tip: number[] = [];
  private merging: { runId: string; count: number } | null = null;

  constructor(private readonly depth = 4) {}

  start(host: SimHost): void {
    this.host = host;
  }

  onArrival(pr: SimPr): void {
    this.entries.push({ pr: pr.number, build: null });
    this.process();
  }

  onRunFinished(runId: string, outcome: CiOutcome): void {
    const entry = this.entries.find((e) => e.build?.runId === runId);
    if (!entry?.build) return;
    if (outcome.kind === 'conflict') {
      // The group could not be created: the PR that does not apply leaves the queue at once.
      entry.build = null;
      this.remove(outcome.prNumber, 'merge_conflict');
    } else {
      entry.build.status = outcome.kind === 'passed' ? 'passed' : 'failed';
    }
    this.process();
  }

  onMergeFinished(result: MergeResult): void {
    const merging = this.merging;
    this.merging = null;
    if (merging && result.ok) {
      const merged = this.entries.splice(0, merging.count);
      this.tip.push(...merged.map((e) => e.pr));
    }
    this.process();
  }

  onTimer(): void {}

  private process(): void {
    if (!this.merging) {
      const window = this.entries.slice(0, this.depth);
      const deepest = window.map((e, i) => ({ e, i })).filter(({ e, i }) => e.build?.status === 'passed' && this.valid(e, i)).pop();
      if (deepest?.e.build) {
        this.merging = { runId: deepest.e.build.runId, count: deepest.i + 1 };
        // Entries ahead still testing merge with it: their own builds are moot.
        for (const e of window.slice(0, deepest.i)) if (e.build?.status === 'running') this.host.cancelRun(e.build.runId);
        this.host.merge({ runId: deepest.e.build.runId, expectedBaseSha: this.host.baseSha, prs: window.slice(0, deepest.i + 1).map((e) => e.pr) });
      } else {
        const front = this.entries[0];
        if (front?.build?.status === 'failed' && this.valid(front, 0)) this.remove(front.pr, 'failed_tests');
      }
    }
    this.rebuild();
  }

  /** Cancels builds whose content is no longer what they stand for, and starts missing ones. */
  private rebuild(): void {
    this.entries.forEach((entry, i) => {
      if (entry.build && !this.valid(entry, i)) {
        if (entry.build.status === 'running') this.host.cancelRun(entry.build.runId);
        entry.build = null;
      }
      if (!entry.build && i < this.depth) {
        // Our tip is the host's: it moves only when our merges finish.
        const runId = this.host.startRun(this.host.baseSha, this.entries.slice(0, i + 1).map((e) => e.pr));
        entry.build = { runId, content: this.expected(i), status: 'running' };
      }
    });
  }

  private expected(i: number): string {
    return [...this.tip, ...this.entries.slice(0, i + 1).map((e) => e.pr)].join(',');
  }

  private valid(entry: Entry, i: number): boolean {
    return entry.build?.content === this.expected(i);
  }

  private remove(pr: number, reason: string): void {
    const index = this.entries.findIndex((e) => e.pr === pr);
    // A PR being merged passed with everything ahead of it: no conflict can name it.
    if (index < 0 || (this.merging && index < this.merging.count)) return;
    const [entry] = this.entries.splice(index, 1);
    if (entry?.build?.status === 'running') this.host.cancelRun(entry.build.runId);
    this.host.eject(pr, reason);
  }
}
