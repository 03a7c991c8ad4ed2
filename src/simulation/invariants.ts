import { interacts, type SimPr } from './workload.js';

/**
 * The safety property every strategy must keep: the target branch only
 * advances to content that passed CI as exactly that content. A lane
 * strategy tests a PR with its lane only, so for it the branch must equal
 * the tested content as seen from the merged PRs' lane (the PRs that
 * interact with them); merges of other lanes in between do not count.
 */
export class InvariantChecker {
  readonly violations: string[] = [];
  private readonly passedKeys = new Set<string>();
  private readonly passedRuns = new Map<string, number[]>();

  constructor(private readonly prs: ReadonlyMap<number, SimPr>) {}

  recordPassed(runId: string, content: readonly number[]): void {
    this.passedKeys.add(content.join(','));
    this.passedRuns.set(runId, [...content]);
  }

  /** Checks a merge producing `next` from the branch; records a violation if untested. */
  checkMerge(next: readonly number[], merged: readonly number[], runId: string, lanes: boolean): boolean {
    if (this.passedKeys.has(next.join(','))) return true;
    const tested = this.passedRuns.get(runId);
    if (lanes && tested && this.laneView(next, merged) === this.laneView(tested, merged)) return true;
    this.violations.push(`merged untested content: +[${merged.join(',')}] via ${runId}`);
    return false;
  }

  record(violation: string): void {
    this.violations.push(violation);
  }

  /** The PRs of `content` that interact with the merged ones, directly or through each other. */
  private laneView(content: readonly number[], merged: readonly number[]): string {
    const lane = merged.map((n) => this.prs.get(n)).filter((p): p is SimPr => p !== undefined);
    const kept: number[] = [];
    // Walk from the newest: a PR belongs to the lane when it interacts with a PR already in it.
    for (let i = content.length - 1; i >= 0; i--) {
      const pr = this.prs.get(content[i] as number);
      if (pr && lane.some((member) => interacts(member, pr))) {
        kept.push(pr.number);
        if (!lane.includes(pr)) lane.push(pr);
      }
    }
    return kept.reverse().join(',');
  }
}
