import type { ServiceMetrics } from '../observability/service-metrics.js';
import { isHostContention, isTransientHostError, refusalBehind } from '../ports/host-errors.js';
import { executeHostAction, settleRefusal, type ActionContext } from './execute-actions.js';
import type { RunnerLog } from './queue-runner.js';
import type { RunnerAction, RunnerInput } from './runner-model.js';

/**
 * A host that fails is not a PR that fails. These tell an outage (retry later,
 * the PR keeps its place) from a refusal (a verdict the engine must hear), and
 * carry a host action out through an outage.
 */

/** The host's words for the operator, without anything that could be a credential. */
export function describeHostError(error: unknown): string {
  const status = (error as { status?: unknown } | null)?.status;
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 200) ?? '';
  return typeof status === 'number' ? `${status}: ${message}` : message || 'no answer';
}

/** Waits before retry `attempt` (1, 2…): doubling from 1 s up to a minute, with ±20% jitter so replicas spread out. */
export function retryDelayMs(attempt: number, random: () => number = Math.random, baseMs = 1_000, maxMs = 60_000): number {
  const plain = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(plain * (0.8 + 0.4 * random()));
}

/** A queue's outage as its writer sees it. */
export interface OutageTracking {
  queueId: string;
  outage: { since: number; attempts: number } | null;
  /** When an action last answered after an outage (recovered): a slow-answer watch started before it says nothing. */
  answeredAt?: number;
}

export interface OutageDeps {
  log: RunnerLog;
  metrics?: ServiceMetrics;
  now: () => number;
  delayMs: (attempt: number) => number;
  sleep: (ms: number) => Promise<void>;
  /** False when this replica must stop acting (lease lost, shutting down). */
  mayAct: () => Promise<boolean>;
  /** Tells the queue's writer, through its inbox. */
  report: (input: RunnerInput) => Promise<void>;
  /** The action may have been carried out before, by a writer whose answers were lost (the first attempt is asked again too). */
  askedBefore?: boolean;
}

/**
 * One host action, retried with back-off while the host fails: the engine
 * hears of the outage (so nothing starts, merges or times out meanwhile) and
 * of the recovery. A refusal becomes its verdict at once. False when this
 * replica must stop acting.
 */
export async function carryOutThroughOutages(ctx: ActionContext, action: RunnerAction, tracking: OutageTracking, deps: OutageDeps): Promise<boolean> {
  let racesLost = 0;
  // The refusal-like answer behind the races lost in a row, and how many times it came: only the same answer each time
  // is a rule rather than a race (found by review: races of other kinds, or a 502 between them, made one answer a refusal).
  let sameAnswer = null as { said: string; times: number } | null;
  for (let attempt = 0; ; attempt++) {
    if (!(await deps.mayAct())) return false;
    try {
      await executeHostAction(ctx, action, attempt > 0 || deps.askedBefore === true);
      if (tracking.outage) await recovered(tracking, deps);
      return true;
    } catch (error) {
      if (!isTransientHostError(error)) {
        // The host answered: the actions' outage reported before is over (found by review: the engine kept waiting for a
        // recovery). The verdict goes first, so no round starts on the recovery before the engine has heard it.
        await settleRefusal(ctx, action, error);
        if (tracking.outage) await recovered(tracking, deps, 'actions');
        return true;
      }
      racesLost = isHostContention(error) ? racesLost + 1 : 0;
      // Lost every time on the same answer a refusal gives too (a ruleset's 422): the refusal it is (found by review: it
      // was an outage without end, the operator never told what to change).
      const refusal = refusalBehind(error);
      const said = refusal === null ? null : describeHostError(refusal);
      sameAnswer = said === null ? null : { said, times: sameAnswer?.said === said ? sameAnswer.times + 1 : 1 };
      if (sameAnswer && sameAnswer.times > RACES_LOST_BEFORE_OUTAGE) {
        await settleRefusal(ctx, action, refusal);
        if (tracking.outage) await recovered(tracking, deps, 'actions');
        return true;
      }
      // A race lost while the host answers is no outage: retried quietly, unless it keeps being lost.
      if (isHostContention(error) && tracking.outage === null && racesLost <= RACES_LOST_BEFORE_OUTAGE) {
        deps.metrics?.hostRetries.inc({ action: action.type });
        deps.log.info({ queueId: tracking.queueId, action: action.type, attempts: racesLost, err: error }, 'another writer moved what the action stood on; retrying with back-off');
        await deps.sleep(deps.delayMs(racesLost));
        continue;
      }
      await failing(tracking, action.type, error, deps);
      await deps.sleep(deps.delayMs(tracking.outage?.attempts ?? 1));
    }
  }
}

/**
 * Races lost in a row (another writer moved what the action stood on) retried without an outage: the host answered,
 * so the queue must not say it is unavailable. Past these something is stuck: it shows as an outage, or, when the
 * host gave the same answer each time and it is one a refusal gives too (refusalBehind), it is settled as that refusal.
 */
export const RACES_LOST_BEFORE_OUTAGE = 3;

/**
 * A host action not answered for this long is an outage, though nothing failed: the GitHub client waits out a rate
 * limit inside one call (up to the limit's reset, an hour) and backs off from 5xx answers, and meanwhile the queue's
 * other actions wait behind it and test results cannot be read either. Reported, the engine holds its test
 * time-outs (found by review: runs timed out, and their PRs failed, while the client waited out a rate limit).
 * Longer than any one action takes when the host answers: a batch's landing, writes spaced a second apart, is well
 * under a minute.
 */
export const SLOW_ANSWER_MS = 120_000;

/**
 * Watches one step of host actions: once it has run SLOW_ANSWER_MS (or `afterMs`) with no outage known, the engine
 * hears the host is unavailable. `settled(true)` when the step went through says the outage is over if nothing else
 * did (carryOutThroughOutages says so itself for an action it retried).
 */
export function watchForSlowAnswer(tracking: OutageTracking, what: string, deps: Pick<OutageDeps, 'log' | 'metrics' | 'now' | 'report'>, afterMs = SLOW_ANSWER_MS): { settled(succeeded: boolean): Promise<void> } {
  let reported: Promise<void> | null = null;
  const startedAt = deps.now();
  const timer = setTimeout(() => {
    // An outage known already, or one just ended by an answer to this very step (its report still being recorded).
    if (tracking.outage !== null || (tracking.answeredAt ?? -Infinity) > startedAt) return;
    const outage = { since: deps.now(), attempts: 0 };
    tracking.outage = outage;
    deps.metrics?.hostOutage.set({ queue: tracking.queueId }, 1);
    const message = `${what}: not done after ${Math.round(afterMs / 1000)} s (the host not answering, a rate limit waited out, or retries); test time-outs wait meanwhile`;
    deps.log.warn({ queueId: tracking.queueId, action: what, waitedSeconds: Math.round(afterMs / 1000) }, 'a host action has not finished; the queue counts it as an outage');
    reported = deps.report({ type: 'host_unavailable', message, cause: 'actions' }).catch((error: unknown) => {
      // Not recorded: the engine knows of no outage, so none is tracked (a real failure then reports its own).
      deps.log.warn({ queueId: tracking.queueId, err: error }, 'could not record that a host action is slow');
      if (tracking.outage === outage) {
        tracking.outage = null;
        deps.metrics?.hostOutage.set({ queue: tracking.queueId }, 0);
      }
    });
  }, afterMs);
  timer.unref();
  return {
    async settled(succeeded) {
      clearTimeout(timer);
      if (reported === null) return;
      await reported;
      if (succeeded && tracking.outage !== null) await recovered(tracking, deps);
    },
  };
}

async function failing(tracking: OutageTracking, action: string, error: unknown, deps: OutageDeps): Promise<void> {
  const first = tracking.outage === null;
  tracking.outage = { since: tracking.outage?.since ?? deps.now(), attempts: (tracking.outage?.attempts ?? 0) + 1 };
  const { attempts, since } = tracking.outage;
  deps.metrics?.hostOutage.set({ queue: tracking.queueId }, 1);
  deps.metrics?.hostRetries.inc({ action });
  // Powers of two: a long outage is logged now and then, not on every retry.
  if (first || (attempts & (attempts - 1)) === 0) {
    deps.log.warn({ queueId: tracking.queueId, action, attempts, outageSeconds: Math.round((deps.now() - since) / 1000), err: error }, 'the repository host is failing; retrying with back-off');
  }
  if (first) await deps.report({ type: 'host_unavailable', message: `${action}: ${describeHostError(error)}`, cause: 'actions' });
}

/**
 * No cause when an action went through: that proves the host answers and the App may act, whatever reported the
 * outage. A refusal proves less (a 403 may be the very access that is missing): it ends only the actions' outage.
 */
async function recovered(tracking: OutageTracking, deps: Pick<OutageDeps, 'log' | 'metrics' | 'now' | 'report'>, cause?: 'actions'): Promise<void> {
  const since = tracking.outage?.since ?? deps.now();
  tracking.outage = null;
  tracking.answeredAt = deps.now();
  deps.metrics?.hostOutage.set({ queue: tracking.queueId }, 0);
  deps.log.info({ queueId: tracking.queueId, outageSeconds: Math.round((deps.now() - since) / 1000) }, 'the repository host answers again');
  await deps.report(cause ? { type: 'host_recovered', cause } : { type: 'host_recovered' });
}
