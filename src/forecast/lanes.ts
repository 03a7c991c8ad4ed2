import type { EngineEntry } from '../engine/model.js';

/** Where a lane stands after a PR: its latest ETA, and the CI slots expected failures have cost so far. */
export interface LaneMark {
  eta: number;
  penalty: number;
}

const START: LaneMark = { eta: Number.NEGATIVE_INFINITY, penalty: 0 };

function later(a: LaneMark, b: LaneMark | undefined): LaneMark {
  return b ? { eta: Math.max(a.eta, b.eta), penalty: Math.max(a.penalty, b.penalty) } : a;
}

/**
 * What a PR waits for, walking the queue in order. In a single queue, everything
 * ahead of it. In a parallel queue, the PRs ahead whose impacted targets overlap
 * its own, directly or through others (engine/order.ts aheadOf): kept per target,
 * so the walk stays linear. Unknown or ALL targets overlap everything.
 */
export class Lanes {
  private readonly byTarget = new Map<string, LaneMark>();
  /** PRs ahead that overlap everything. */
  private wide: LaneMark = START;
  /** Every PR ahead. */
  private all: LaneMark = START;

  constructor(private readonly single: boolean) {}

  before(entry: EngineEntry): LaneMark {
    const targets = this.targetsOf(entry);
    if (!targets) return this.all;
    let mark = this.wide;
    for (const target of targets) mark = later(mark, this.byTarget.get(target));
    return mark;
  }

  after(entry: EngineEntry, mark: LaneMark): void {
    this.all = later(this.all, mark);
    const targets = this.targetsOf(entry);
    if (!targets) {
      this.wide = later(this.wide, mark);
      return;
    }
    for (const target of targets) this.byTarget.set(target, later(mark, this.byTarget.get(target)));
  }

  private targetsOf(entry: EngineEntry): readonly string[] | null {
    if (this.single) return null;
    const targets = entry.targets?.targets;
    return !targets || targets === 'ALL' ? null : targets;
  }
}
