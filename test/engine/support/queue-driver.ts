import type { QueueConfig } from '../../../src/domain/queue-config.js';
import { decide } from '../../../src/engine/decide.js';
import { initialEngineState } from '../../../src/engine/initial-state.js';
import type { EngineAction, EngineEvent, EngineRun, EngineState, PrFacts } from '../../../src/engine/model.js';

export const MINUTE = 60_000;
export const facts = (headSha: string, author?: string): PrFacts => ({ headSha, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable', ...(author ? { author } : {}) });

/** One queue driven through decide() event by event, at given times, keeping every action it decided. */
export function queueDriver(config: Partial<QueueConfig>) {
  let state: EngineState = initialEngineState('main', config, 'base0');
  const log: EngineAction[] = [];
  const send = (event: EngineEvent, at = 0) => {
    const decision = decide(state, event, at);
    state = decision.state;
    log.push(...decision.actions);
    return decision;
  };
  const submit = (n: number, at = 0) => send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`) }, at);
  return {
    send,
    submit,
    log,
    get state() {
      return state;
    },
    states: () => Object.fromEntries(state.entries.map((e) => [e.prNumber, e.state])),
  };
}

type Driver = ReturnType<typeof queueDriver>;

/** Every run the queue started, in order. */
export const startedRuns = (q: Driver): EngineRun[] => q.log.flatMap((a) => (a.type === 'start_run' ? [a.run] : []));
/** The PR numbers of heads (entry ids are `e<number>`). */
export const prNumbers = (heads: EngineRun['unit']) => heads.map((h) => Number(h.entryId.slice(1)));
/** Each started run as [id, PRs ahead, PRs tested]. */
export const runShapes = (q: Driver) => startedRuns(q).map((r) => [r.id, prNumbers(r.ahead), prNumbers(r.unit)]);
/** A PR submitted with a risk hint (none when undefined). */
export const submitWithRisk = (q: Driver, n: number, risk?: number, at = 0) =>
  q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`), ...(risk === undefined ? {} : { risk }) }, at);
