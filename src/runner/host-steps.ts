import { isTerminal } from '../domain/pull-request-state.js';
import type { RunnerAction } from './runner-model.js';

/**
 * Statuses not worth showing: a PR's passing state (waiting, testing) that a
 * later action in the same stretch replaces anyway, and "tests passed" for a
 * PR its decision also lands (merged, or back in line, is what follows). Each
 * would cost a request to the host for a state nobody would see. Endings are
 * always shown (they carry comments).
 */
export function supersededStatuses(actionLists: RunnerAction[][]): Set<RunnerAction> {
  const superseded = new Set<RunnerAction>();
  const latest = new Map<string, RunnerAction>();
  for (const actions of actionLists) {
    // "Tests passed" for a PR the same decision lands: the landing's outcome follows at once.
    const landing = new Set(actions.flatMap((action) => (action.type === 'merge' ? action.entryIds : [])));
    for (const action of actions) {
      if (action.type === 'publish_status' && action.state === 'TESTS_PASSED' && landing.has(action.entryId)) superseded.add(action);
      if (action.type !== 'publish_status') continue;
      const before = latest.get(action.entryId);
      if (before && before.type === 'publish_status' && !isTerminal(before.state)) superseded.add(before);
      latest.set(action.entryId, action);
    }
  }
  return superseded;
}

/**
 * A decision's host actions in the order they are carried out: one at a time, or, when `statusesTogether`,
 * a stretch of statuses of different PRs as one step (a PR's second status starts the next step).
 */
export function hostSteps(actions: RunnerAction[], statusesTogether: boolean): RunnerAction[][] {
  const steps: RunnerAction[][] = [];
  let statuses: RunnerAction[] = [];
  const entriesIn = new Set<string>();
  const closeStatuses = () => {
    if (statuses.length > 0) steps.push(statuses);
    statuses = [];
    entriesIn.clear();
  };
  for (const action of actions) {
    if (!statusesTogether || action.type !== 'publish_status') {
      closeStatuses();
      steps.push([action]);
      continue;
    }
    if (entriesIn.has(action.entryId)) closeStatuses();
    statuses.push(action);
    entriesIn.add(action.entryId);
  }
  closeStatuses();
  return steps;
}
