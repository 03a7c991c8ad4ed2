import type { StrategyMetrics } from '../src/simulation/metrics.js';
import { DIRECT_ROW, type WorkloadResult } from './run-strategies.js';

/** One goal of issue 3, checked against measured numbers. */
export interface GoalCheck {
  goal: string;
  met: boolean;
  measured: string;
}

const OURS = 'ours';

function row(result: WorkloadResult, strategy: string): StrategyMetrics | undefined {
  return result.metrics.find((m) => m.strategy === strategy);
}

/** The goals; the oracle is a bound, not a competitor, so "ahead of" excludes it. */
export function checkGoals(results: WorkloadResult[]): GoalCheck[] {
  const checks: GoalCheck[] = [];
  for (const result of results) {
    const ours = row(result, OURS);
    if (!ours) continue;
    const name = result.workload;
    checks.push({ goal: `(${name}) zero broken merges`, met: ours.brokenMerges === 0 && ours.violations === 0, measured: `${ours.brokenMerges} broken, ${ours.violations} invariant violations` });
    const direct = row(result, DIRECT_ROW);
    if (direct) checks.push({ goal: `(${name}) zero broken merges with direct merge`, met: direct.brokenMerges === 0 && direct.violations === 0, measured: `${direct.brokenMerges} broken, ${direct.violations} invariant violations` });
    if (!['a', 'b', 'c'].includes(name)) continue;
    // Our own variants (ours+direct) are not rivals.
    const rivals = result.metrics.filter((m) => !m.strategy.startsWith(OURS) && m.strategy !== 'oracle');
    const bestRate = Math.max(...rivals.map((m) => m.mergedPerHour));
    checks.push({ goal: `(${name}) merged/h ahead of every other strategy`, met: ours.mergedPerHour > bestRate, measured: `${ours.mergedPerHour.toFixed(2)} vs best other ${bestRate.toFixed(2)}` });
    const bestP95 = Math.min(...rivals.map((m) => m.p95QueueMinutes ?? Number.POSITIVE_INFINITY));
    checks.push({ goal: `(${name}) p95 time in queue ahead of every other strategy`, met: (ours.p95QueueMinutes ?? Infinity) < bestP95, measured: `${ours.p95QueueMinutes?.toFixed(0)} min vs best other ${bestP95.toFixed(0)} min` });
    if (name !== 'a') continue;
    checks.push({ goal: '(a) at most 1.5 CI runs per merged PR', met: (ours.runsPerMerged ?? Infinity) <= 1.5, measured: ours.runsPerMerged?.toFixed(2) ?? '-' });
    const oracle = row(result, 'oracle');
    const ratio = (ours.p95QueueMinutes ?? Infinity) / (oracle?.p95QueueMinutes ?? 0);
    checks.push({ goal: "(a) p95 time in queue within 2x the oracle's", met: ratio <= 2, measured: `${ratio.toFixed(2)}x (${ours.p95QueueMinutes?.toFixed(0)} vs ${oracle?.p95QueueMinutes?.toFixed(0)} min)` });
  }
  return checks;
}
