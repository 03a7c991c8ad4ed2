import type { SimPr, Workload, WorkloadSpec } from '../../src/simulation/workload.js';

/** A hand-made workload: CI always 30 minutes, no flakes, every PR at the given minute (default 0). */
export function tinyWorkload(prs: Array<Partial<SimPr> & { number: number }>, over: Partial<WorkloadSpec> = {}, conflicts: Array<[number, number]> = []): Workload {
  const spec: WorkloadSpec = {
    name: 'tiny',
    description: 'hand-made',
    prCount: prs.length,
    arrivalsPerHour: 1,
    breakRate: 0,
    runFlakeRate: 0,
    ci: { meanMinutes: 30, jitterMinutes: 0 },
    targetGroups: 1,
    conflictRate: 0,
    mergeMinutes: 0,
    ...over,
  };
  return {
    spec,
    prs: prs.map((p) => ({ arrivesAt: 0, breaks: false, flakyRate: 0, targets: ['group-0'], riskHint: 0, author: 'a0', changedFiles: 1, ...p })),
    conflicts,
  };
}

export const MIN = 60_000;
