import type { EngineRun, EngineState } from '../engine/model.js';
import { runsAndProbes } from '../engine/probes.js';

/** The runs (probes too) the engine has in flight, with the numbers of their PRs: what a queue's board shows of it. */
export interface RunsInFlight {
  runs: EngineRun[];
  prNumbers: Map<string, number>;
}

/**
 * A copy of the runs in flight only: the board asked for a copy of the whole state before, about 20 ms of the event
 * loop per ask at 10,000 PRs (found by a cost review), for a handful of runs. A copy all the same, since the writer
 * changes its state in place while the board reads the runs' records.
 */
export function runsInFlight(state: EngineState): RunsInFlight {
  const runs = structuredClone(runsAndProbes(state));
  const shown = new Set(runs.flatMap((run) => [...run.unit, ...run.ahead].map((head) => head.entryId)));
  const prNumbers = new Map<string, number>();
  for (const entry of state.entries) if (shown.has(entry.id)) prNumbers.set(entry.id, entry.prNumber);
  return { runs, prNumbers };
}
