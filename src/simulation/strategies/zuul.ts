import type { CiOutcome } from '../ci-model.js';
import type { MergeResult, SimHost, Strategy } from '../strategy.js';
import type { SimPr } from '../workload.js';

interface Build {
  runId: string;
  /** Everything it tests, from the root: the merged items, then the non-failing items ahead, then its own. */
  content: string;
  status: 'running' | 'passed' | 'failed';
  /** Why the item fails, when it does: reported once the item reaches the head. */
  reason: string;
}

interface Item {
  pr: number;
  build: Build | null;
}

/** Zuul's pipeline defaults: window 20, window-floor 3, linear increase by 1, exponential decrease by 2. */
export const ZUUL_WINDOW = { initial: 20, floor: 3, increase: 1, decreaseFactor: 2 };

/**
 * Zuul's dependent ("gate") pipeline (zuul-ci.org docs, config/pipeline and
 * gating): every item is tested speculatively on the branch plus all items
 * ahead of it. Only items inside the window get builds; the window starts at
 * 20, grows by 1 on each merge and halves (never below 3) on each item
 * reported failed, and here CI capacity bounds the builds running at once too.
 * When an item fails, the items behind it are re-parented to the nearest
 * non-failing item ahead and restarted without it; the failing item stays
 * until it reaches the head (everything ahead merged), then is reported failed
 * and removed. A merge conflict makes the item fail the same way, reported as
 * a conflict. Items merge one at a time from the head; no batches, no retries.
 */
export class ZuulStrategy implements Strategy {
  readonly name = 'zuul';
  readonly usesLanes = false;
  readonly seesFlakes = true;
  private host!: SimHost;
  private items: Item[] = [];
  private readonly tip: number[] = [];
  private merging = false;
  private actionable = ZUUL_WINDOW.initial;

  constructor(private readonly capacity: number) {}

  /** How many items at the front of the queue may have builds. */
  get window(): number {
    return this.actionable;
  }

  start(host: SimHost): void {
    this.host = host;
  }

  onArrival(pr: SimPr): void {
    this.items.push({ pr: pr.number, build: null });
    this.process();
  }

  onRunFinished(runId: string, outcome: CiOutcome): void {
    const item = this.items.find((i) => i.build?.runId === runId);
    if (!item?.build) return;
    item.build.status = outcome.kind === 'passed' ? 'passed' : 'failed';
    // A conflict naming an item ahead is that item's: its own build reports it, and this one is restarted then.
    if (outcome.kind === 'conflict' && outcome.prNumber === item.pr) item.build.reason = 'merge_conflict';
    this.process();
  }

  onMergeFinished(result: MergeResult): void {
    this.merging = false;
    if (result.ok) {
      this.tip.push((this.items.shift() as Item).pr);
      this.actionable += ZUUL_WINDOW.increase;
    }
    this.process();
  }

  onTimer(): void {}

  private process(): void {
    this.resetMoved();
    if (!this.merging) this.reportHead();
    // Builds for the window, front first, as far as CI capacity goes.
    const chains = this.chains();
    this.items.slice(0, this.actionable).forEach((item, i) => {
      if (item.build || this.running() >= this.capacity) return;
      const content = chains[i] as number[];
      // The host's branch is our tip: it moves only when our merges land.
      item.build = { runId: this.host.startRun(this.host.baseSha, content.slice(this.tip.length)), content: content.join(','), status: 'running', reason: 'failed_tests' };
    });
  }

  /** Merges a passed head, or reports failed heads: a failing item leaves only once nothing is ahead of it. */
  private reportHead(): void {
    for (let head = this.items[0]; head?.build; head = this.items[0]) {
      if (head.build.status === 'passed') {
        this.merging = true;
        this.host.merge({ runId: head.build.runId, expectedBaseSha: this.host.baseSha, prs: [head.pr] });
        return;
      }
      if (head.build.status !== 'failed') return;
      // No item's chain holds a failing item, so removing it restarts nothing.
      this.items.shift();
      this.host.eject(head.pr, head.build.reason);
      this.actionable = Math.max(ZUUL_WINDOW.floor, Math.floor(this.actionable / ZUUL_WINDOW.decreaseFactor));
    }
  }

  /** Restarts every item whose nearest non-failing item ahead changed since its build started. */
  private resetMoved(): void {
    // Dropping a stale build changes no chain: a stale build is not a failing one.
    const chains = this.chains();
    this.items.forEach((item, i) => {
      if (item.build && item.build.content !== (chains[i] as number[]).join(',')) {
        if (item.build.status === 'running') this.host.cancelRun(item.build.runId);
        item.build = null;
      }
    });
  }

  /** What each item is tested on: the merged items, every item ahead that is not failing, then itself. */
  private chains(): number[][] {
    const ahead = [...this.tip];
    return this.items.map((item) => {
      const chain = [...ahead, item.pr];
      const failing = item.build?.status === 'failed' && item.build.content === chain.join(',');
      if (!failing) ahead.push(item.pr);
      return chain;
    });
  }

  private running(): number {
    return this.items.filter((i) => i.build?.status === 'running').length;
  }
}
