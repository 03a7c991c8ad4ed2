import type { EngineEntry } from '../engine/model.js';

/** Where a lane stands after a PR: its latest ETA, and the CI slots expected failures have cost so far. */
export interface LaneMark {
  eta: number;
  penalty: number;
}

/**
 * What a PR waits for, walking the queue in order. In a single queue, everything
 * ahead of it. In a parallel queue, the PRs ahead whose impacted targets overlap
 * its own, directly or through others (engine/order.ts aheadOf): kept per target,
 * so the walk stays linear. Unknown or ALL targets overlap everything.
 *
 * The marks kept are this class's own and raised in place, not replaced by a new object per PR and target (the
 * first forecast of a 4,500-PR parallel queue took half the time: 37 against 71-75 ms; warm ones, about 6 ms,
 * hardly change); `before` answers a new one.
 */
export class Lanes {
  private readonly byTarget = new Map<string, LaneMark>();
  /** PRs ahead that overlap everything. */
  private readonly wide: LaneMark = { eta: Number.NEGATIVE_INFINITY, penalty: 0 };
  /** Every PR ahead. */
  private readonly all: LaneMark = { eta: Number.NEGATIVE_INFINITY, penalty: 0 };

  constructor(private readonly single: boolean) {}

  before(entry: EngineEntry): LaneMark {
    const targets = this.targetsOf(entry);
    if (!targets) return { eta: this.all.eta, penalty: this.all.penalty };
    let { eta, penalty } = this.wide;
    for (const target of targets) {
      const mark = this.byTarget.get(target);
      if (!mark) continue;
      if (mark.eta > eta) eta = mark.eta;
      if (mark.penalty > penalty) penalty = mark.penalty;
    }
    return { eta, penalty };
  }

  after(entry: EngineEntry, mark: LaneMark): void {
    raise(this.all, mark);
    const targets = this.targetsOf(entry);
    if (!targets) {
      raise(this.wide, mark);
      return;
    }
    for (const target of targets) {
      const kept = this.byTarget.get(target);
      if (kept) raise(kept, mark);
      else this.byTarget.set(target, { eta: mark.eta, penalty: mark.penalty });
    }
  }

  private targetsOf(entry: EngineEntry): readonly string[] | null {
    if (this.single) return null;
    const targets = entry.targets?.targets;
    return !targets || targets === 'ALL' ? null : targets;
  }
}

function raise(kept: LaneMark, by: LaneMark): void {
  if (by.eta > kept.eta) kept.eta = by.eta;
  if (by.penalty > kept.penalty) kept.penalty = by.penalty;
}
