/**
 * A model of the world the engine acts on, for property tests: PR heads, CI
 * truth (which heads break the build), the target branch, and checks of what
 * must hold after every decision.
 */
import fc from 'fast-check';
import { overlaps } from '../../../src/engine/content.js';
import { decide, decideAllInPlace } from '../../../src/engine/decide.js';
import { initialEngineState } from '../../../src/engine/initial-state.js';
import type { EngineAction, EngineEvent, EngineRun, EngineState, PrFacts } from '../../../src/engine/model.js';
import { queueOrder } from '../../../src/engine/order.js';
import { HOST_STILL_DECIDING, notReadyReason } from '../../../src/engine/admission.js';
import type { QueueConfig } from '../../../src/domain/queue-config.js';
import type { RequestedQueueState } from '../../../src/domain/queue-state.js';

const TARGETS = ['a', 'b', 'c', 'd'];
const MINUTE = 60_000;

export type Command =
  | { kind: 'submit'; pr: number; priority: number; noBatch: boolean; breaks: boolean; targets: string[] | 'ALL'; conflictsWith: number | null; risk?: number | null }
  | { kind: 'finish'; pick: number; flaky: boolean }
  | { kind: 'completeMerge'; ok: boolean }
  | { kind: 'cancel'; pick: number }
  | { kind: 'push'; pick: number }
  | { kind: 'priority'; pick: number; priority: number }
  | { kind: 'restartTests'; pick: number }
  | { kind: 'config'; config: Partial<QueueConfig>; requestedState: RequestedQueueState }
  | { kind: 'baseMoved' }
  | { kind: 'tick'; minutes: number }
  | { kind: 'runnerRestart' };

export const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('submit' as const), pr: fc.integer({ min: 1, max: 12 }), priority: fc.constantFrom(0, 10, 100, 100, 200), noBatch: fc.boolean(), breaks: fc.integer({ min: 0, max: 3 }).map((n) => n === 0), targets: fc.oneof(fc.subarray(TARGETS, { minLength: 1 }), fc.constant('ALL' as const)), conflictsWith: fc.option(fc.integer({ min: 1, max: 12 }), { freq: 6 }), risk: fc.option(fc.constantFrom(0.02, 0.3, 0.6, 0.95), { freq: 2 }) }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('finish' as const), pick: fc.nat(), flaky: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('completeMerge' as const), ok: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('push' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('priority' as const), pick: fc.nat(), priority: fc.constantFrom(0, 10, 100, 200) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restartTests' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('config' as const),
      config: fc.record({
        mode: fc.constantFrom('single' as const, 'parallel' as const),
        concurrency: fc.integer({ min: 1, max: 4 }),
        batch: fc.boolean(),
        batchingMinSize: fc.integer({ min: 1, max: 3 }),
        batchingMaxWaitTimeMinutes: fc.integer({ min: 0, max: 5 }),
        bisectionConcurrency: fc.integer({ min: 1, max: 2 }),
        pendingFailureDepth: fc.integer({ min: 0, max: 2 }),
        canOptimisticallyMerge: fc.boolean(),
        tuning: fc.constantFrom('adaptive' as const, 'fixed' as const),
      }),
      requestedState: fc.constantFrom('RUNNING' as const, 'RUNNING' as const, 'PAUSED' as const, 'DRAINING' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('baseMoved' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tick' as const), minutes: fc.integer({ min: 1, max: 90 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('runnerRestart' as const) }) },
);

interface Content {
  root: string;
  heads: string[];
}

/**
 * The queue the world starts with: empty, but it has seen its authors before,
 * so derived risks take part from the first PR: a0 broke the build four times
 * in four (likely to break), a1 once in four, a2 is new (the queue's rate).
 */
export function worldInitialState(): EngineState {
  return {
    ...initialEngineState('main', { concurrency: 2 }, 'root0'),
    authorOutcomes: [
      { author: 'a0', outcomes: [1, 1, 1, 1] },
      { author: 'a1', outcomes: [0, 1, 0, 0] },
    ],
  };
}

/** The world the engine acts on: PR heads, CI truth, the target branch. */
export class World {
  state: EngineState = worldInitialState();
  now = 0;
  events: Array<{ event: EngineEvent; now: number }> = [];
  decisions: EngineAction[][] = [];
  private heads = new Map<number, number>(); // pr -> head version
  private breaking = new Set<string>(); // tokens of heads that break the build
  private targets = new Map<number, string[] | 'ALL'>();
  /** Conflicting pairs of PRs: a run containing both cannot be built. */
  private conflicts = new Set<string>();
  private attempts = new Map<number, number>();
  private running = new Map<string, { run: EngineRun; content: Content }>();
  private passed = new Map<string, Content>();
  private shaContent = new Map<string, Content>([['root0', { root: 'root0', heads: [] }]]);
  branch = { sha: 'root0', content: { root: 'root0', heads: [] } as Content };
  private mergeInFlight: Extract<EngineAction, { type: 'merge' }> | null = null;
  private refusals = 0;
  private concluded = new Map<string, string>();
  private counter = 0;

  entryIds(): string[] {
    return this.state.entries.map((e) => e.id).sort();
  }

  private facts(pr: number): PrFacts {
    // Three authors, so their records fill up and derived risks move PRs too.
    return { headSha: `h${pr}v${this.heads.get(pr) ?? 0}`, baseBranch: 'main', open: true, draft: false, mergeability: 'mergeable', author: `a${pr % 3}` };
  }

  /**
   * `together`: consecutive submits are decided as one decision (as the runner decides what arrives
   * together), each other event alone.
   */
  constructor(private readonly options: { together?: boolean } = {}) {}

  /** Submits waiting to be decided together (`together` only). */
  private arriving: Array<{ event: EngineEvent; at: number }> = [];

  send(event: EngineEvent): void {
    if (this.options.together && event.type === 'submitted') {
      this.arriving.push({ event, at: this.now });
      return;
    }
    this.flush();
    this.decideAndAct([{ event, at: this.now }]);
  }

  /** Decides the submits waiting together (a no-op unless `together`). */
  flush(): void {
    const arriving = this.arriving;
    this.arriving = [];
    if (arriving.length > 0) this.decideAndAct(arriving);
  }

  private decideAndAct(events: Array<{ event: EngineEvent; at: number }>): void {
    const frozen = deepFreeze(structuredClone(this.state));
    const decision = events.length === 1 ? decide(frozen, (events[0] as { event: EngineEvent }).event, this.now) : decideAllInPlace(structuredClone(frozen), events);
    // The order a decision hands out (the writer's places in line) is the queue's order after it.
    expect(decision.queued?.map((e) => e.id)).toEqual(queueOrder(decision.state).map((e) => e.id));
    for (const { event } of events) this.events.push({ event, now: this.now });
    this.decisions.push(decision.actions);
    this.state = decision.state;
    for (const action of decision.actions) this.execute(action, decision.state);
    // Probes (probes.ts) hold CI slots too.
    const running = [...decision.state.runs, ...(decision.state.probes ?? [])].filter((r) => r.status === 'running').length;
    expect(running).toBeLessThanOrEqual(decision.state.config.concurrency);
    this.checkOrder(decision, frozen);
    this.checkTouchedOnly(decision.state);
  }

  /**
   * A decision derives and publishes the states of the entries it concerns only (context.ts): it relies on every
   * other entry being PENDING or NOT_READY outside any run, and on admission being a function of facts, targets and
   * settings alone. Both are checked after every decision against a pass over the whole queue.
   */
  private checkTouchedOnly(state: EngineState): void {
    const inRuns = new Set(state.runs.flatMap((run) => run.unit.map((head) => head.entryId)));
    for (const entry of state.entries) {
      if (!inRuns.has(entry.id)) expect(['PENDING', 'NOT_READY']).toContain(entry.state);
      const reason = notReadyReason({ targetBranch: state.targetBranch, mode: state.config.mode, mergeMethod: state.config.mergeMethod, facts: entry.facts, targetsSha: entry.targets?.sha ?? null });
      if (reason === null) expect(entry.state).not.toBe('NOT_READY');
      else if (!HOST_STILL_DECIDING.includes(reason)) expect(entry.state).toBe('NOT_READY');
    }
  }

  private execute(action: EngineAction, after: EngineState): void {
    switch (action.type) {
      case 'start_run': {
        const base = this.shaContent.get(action.run.baseSha);
        expect(base).toBeDefined();
        const content = { root: (base as Content).root, heads: [...(base as Content).heads, ...[...action.run.ahead, ...action.run.unit].map((h) => `${h.entryId}@${h.headSha}`)] };
        this.running.set(action.run.id, { run: action.run, content });
        return;
      }
      case 'cancel_run':
        this.running.delete(action.runId);
        return;
      case 'merge': {
        expect(this.mergeInFlight).toBeNull();
        const tested = this.passed.get(action.runId);
        // Only content that passed may reach the branch.
        expect(tested).toBeDefined();
        const content = tested as Content;
        expect(content.root).toBe(this.branch.content.root);
        const newHeads = content.heads.filter((h) => !this.branch.content.heads.includes(h));
        expect(newHeads.map((h) => h.split('@')[0]).sort()).toEqual([...action.entryIds].sort());
        if (after.config.mode === 'single' && this.state.config.mode === 'single') {
          // Single queue: the branch becomes exactly the tested content.
          expect([...this.branch.content.heads, ...newHeads]).toEqual(content.heads);
        }
        for (const token of newHeads) {
          const [entryId, head] = token.split('@') as [string, string];
          expect(this.concluded.get(entryId)).toBeUndefined(); // never after cancel, never twice
          const pr = Number(entryId.slice(1).split('.')[0]);
          expect(head).toBe(this.facts(pr).headSha); // merged with the tested head
          expect(this.breaking.has(token)).toBe(false); // a broken PR never merges
        }
        this.mergeInFlight = action;
        return;
      }
      case 'publish_status':
        if (['MERGED', 'FAILED', 'CANCELLED'].includes(action.state)) {
          expect(this.concluded.get(action.entryId)).toBeUndefined();
          this.concluded.set(action.entryId, action.state);
        }
        return;
      case 'emit':
      case 'wake_at':
        return;
    }
  }

  /** Nothing waiting is ahead (priority, then FIFO) of something that just started. */
  private checkOrder(decision: { state: EngineState; actions: EngineAction[] }, before: EngineState): void {
    // A restart re-runs a unit already in flight: only newly started units are checked.
    const wasInRun = new Set(before.runs.flatMap((r) => r.unit.map((h) => h.entryId)));
    const started = decision.actions.filter(
      (a): a is Extract<EngineAction, { type: 'start_run' }> => a.type === 'start_run' && !a.run.unit.every((h) => wasInRun.has(h.entryId)),
    );
    if (started.length === 0) return;
    const inRun = new Set(decision.state.runs.flatMap((r) => r.unit.map((h) => h.entryId)));
    const waiting = decision.state.entries.filter((e) => e.state === 'PENDING' && !inRun.has(e.id) && e.place === null);
    const placedBefore = new Set(before.entries.filter((e) => e.place !== null).map((e) => e.id));
    for (const action of started) {
      for (const head of action.run.unit) {
        const member = decision.state.entries.find((e) => e.id === head.entryId);
        // A PR back in its place in line goes by that place; a PR tested for the first time goes by priority, then FIFO.
        if (!member || placedBefore.has(member.id)) continue;
        // A parallel queue that batches lets lanes go their own pace (a lane's batch may wait to fill
        // while another lane starts): there, only the member's own lane keeps the order.
        const laneOnly = decision.state.config.mode === 'parallel' && (decision.state.config.batch || decision.state.config.tuning === 'adaptive');
        for (const w of waiting) {
          if (laneOnly && !overlaps(w, member)) continue;
          // A risk (hinted or derived) moves a PR not yet tested by design (safer PRs first): FIFO holds between PRs without one.
          if (w.risk !== undefined || member.risk !== undefined) continue;
          const ahead = w.priority < member.priority || (w.priority === member.priority && w.submittedAt < member.submittedAt);
          expect(ahead).toBe(false);
        }
      }
    }
  }

  private pickEntry(pick: number) {
    const entries = this.state.entries;
    return entries.length === 0 ? undefined : entries[pick % entries.length];
  }

  apply(c: Command): void {
    // Only submits arrive together; anything else sees what they decided.
    if (c.kind !== 'submit') this.flush();
    switch (c.kind) {
      case 'submit': {
        if (this.state.entries.some((e) => e.prNumber === c.pr) || this.arriving.some(({ event }) => event.type === 'submitted' && event.prNumber === c.pr)) return;
        const attempt = (this.attempts.get(c.pr) ?? 0) + 1;
        this.attempts.set(c.pr, attempt);
        const facts = this.facts(c.pr);
        if (c.breaks) this.breaking.add(`e${c.pr}.${attempt}@${facts.headSha}`);
        this.targets.set(c.pr, c.targets);
        if (c.conflictsWith !== null && c.conflictsWith !== c.pr) this.conflicts.add([c.pr, c.conflictsWith].sort().join('~'));
        this.send({ type: 'submitted', entryId: `e${c.pr}.${attempt}`, prNumber: c.pr, priority: c.priority, noBatch: c.noBatch, facts, targets: { sha: facts.headSha, targets: c.targets }, ...(typeof c.risk === 'number' ? { risk: c.risk } : {}) });
        return;
      }
      case 'finish': {
        const runs = [...this.running.values()];
        if (runs.length === 0) return;
        const { run, content } = runs[c.pick % runs.length] as { run: EngineRun; content: Content };
        this.running.delete(run.id);
        const culprit = [...run.ahead, ...run.unit].find((h, i, all) =>
          all.slice(0, i).some((before) => this.conflicts.has([prOf(before.entryId), prOf(h.entryId)].sort().join('~'))),
        );
        if (culprit) {
          // The host could not apply this head on top of the ones before it.
          this.send({ type: 'run_finished', runId: run.id, passed: false, conflictEntryId: culprit.entryId });
          return;
        }
        const broken = content.heads.some((h) => this.breaking.has(h));
        const passed = !broken && !c.flaky;
        if (passed) this.passed.set(run.id, content);
        this.send({ type: 'run_finished', runId: run.id, passed, ...(passed ? {} : { failedChecks: ['ci'] }) });
        return;
      }
      case 'completeMerge': {
        const merge = this.mergeInFlight;
        if (!merge) return;
        this.mergeInFlight = null;
        if (!c.ok) {
          // The host's refusals in turn: the branch moved, a PR refused (it alone fails), landing blocked (until a config change).
          const kind = this.refusals++ % 3;
          if (kind === 0) {
            this.send({ type: 'merge_finished', runId: merge.runId, ok: false, reason: 'base_moved' });
            // The runner then reads the real head (read_base_head).
            return this.send({ type: 'base_moved', sha: this.branch.sha });
          }
          if (kind === 1 && merge.entryIds[0]) return this.send({ type: 'merge_finished', runId: merge.runId, ok: false, reason: 'refused', entryId: merge.entryIds[0], message: 'refused' });
          return this.send({ type: 'merge_finished', runId: merge.runId, ok: false, reason: 'blocked', message: 'blocked' });
        }
        const tested = this.passed.get(merge.runId) as Content;
        const newHeads = tested.heads.filter((h) => !this.branch.content.heads.includes(h));
        const sha = `m${++this.counter}`;
        this.branch = { sha, content: { root: this.branch.content.root, heads: [...this.branch.content.heads, ...newHeads] } };
        this.shaContent.set(sha, this.branch.content);
        return this.send({ type: 'merge_finished', runId: merge.runId, ok: true, newBaseSha: sha });
      }
      case 'cancel': {
        const entry = this.pickEntry(c.pick);
        if (entry) this.send({ type: 'cancelled', entryId: entry.id });
        return;
      }
      case 'push': {
        const entry = this.pickEntry(c.pick);
        if (!entry) return;
        this.heads.set(entry.prNumber, (this.heads.get(entry.prNumber) ?? 0) + 1);
        this.send({ type: 'pr_facts_changed', prNumber: entry.prNumber, facts: this.facts(entry.prNumber), merged: false });
        return;
      }
      case 'priority': {
        const entry = this.pickEntry(c.pick);
        if (entry) this.send({ type: 'priority_changed', entryId: entry.id, priority: c.priority, noBatch: entry.noBatch });
        return;
      }
      case 'restartTests': {
        const entry = this.pickEntry(c.pick);
        if (entry) this.send({ type: 'restart_requested', entryId: entry.id });
        return;
      }
      case 'config':
        this.send({ type: 'config_changed', config: { ...this.state.config, ...c.config }, requestedState: c.requestedState });
        return;
      case 'baseMoved': {
        if (this.mergeInFlight) return; // A push racing our own merge is the merge's re-check (GitHub issue), not this model's.
        const sha = `x${++this.counter}`;
        this.branch = { sha, content: { root: sha, heads: [] } };
        this.shaContent.set(sha, this.branch.content);
        this.send({ type: 'base_moved', sha });
        return;
      }
      case 'tick':
        this.now += c.minutes * MINUTE;
        this.send({ type: 'tick' });
        return;
      case 'runnerRestart':
        // What the runner persists and reloads: the state must survive JSON.
        this.state = JSON.parse(JSON.stringify(this.state)) as EngineState;
        return;
    }
  }

  /** Lets everything finish by the truth (no flakes), with the queue running. */
  drain(): void {
    this.flush();
    this.send({ type: 'config_changed', config: this.state.config, requestedState: 'RUNNING' });
    for (let i = 0; i < 500; i++) {
      if (this.mergeInFlight) this.apply({ kind: 'completeMerge', ok: true });
      else if (this.running.size > 0) this.apply({ kind: 'finish', pick: 0, flaky: false });
      else if (this.state.runs.some((r) => r.status !== 'running') || this.state.entries.some((e) => e.state !== 'NOT_READY')) this.apply({ kind: 'tick', minutes: 61 });
      else return;
    }
    throw new Error('the queue did not drain');
  }
}

function prOf(entryId: string): number {
  return Number(entryId.slice(1).split('.')[0]);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

