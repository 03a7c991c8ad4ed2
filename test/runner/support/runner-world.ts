/**
 * The engine's property-test world, driven through the real runtime: the use
 * cases record intents, the QueueRunner decides, persists (FerretDB), records
 * entry states and carries out host actions against a host double that keeps
 * the truth (PR heads, which heads break the build, the target branch). Runner
 * restarts rebuild the state from snapshot and log. Checks are made on what the
 * host was asked to do and on what the database says.
 */
import { DEFAULT_QUEUE_CONFIG, type QueueConfig } from '../../../src/domain/queue-config.js';
import type { RequestedQueueState } from '../../../src/domain/queue-state.js';
import { isTerminal } from '../../../src/domain/pull-request-state.js';
import type { PullRequestFacts, QueueRecord } from '../../../src/domain/records.js';
import { gitHostRegistry, type GitHost, type MergeRequest, type PullRequestStatusUpdate, type TestRunRequest } from '../../../src/ports/git-host.js';
import type { Stores } from '../../../src/ports/stores.js';
import { EnqueuedEntriesCache } from '../../../src/queue/enqueued-cache.js';
import { pullRequestService, type PullRequestService } from '../../../src/queue/pull-request-service.js';
import { hostEvents } from '../../../src/runner/host-events.js';
import { QueueRunner } from '../../../src/runner/queue-runner.js';
import type { Command } from '../../engine/support/engine-world.js';

const HOST = 'prop.example';
const MINUTE = 60_000;
const silent = { info() {}, warn() {}, error() {} };

type Token = string; // `${pr}@${headSha}`

/** The repository and its CI, as the host double knows them. */
class Truth implements GitHost {
  readonly answersLocally = true;
  heads = new Map<number, number>();
  breaking = new Set<Token>();
  conflicts = new Set<string>();
  branch: { sha: string; content: Token[] } = { sha: 'root0', content: [] };
  shaContent = new Map<string, Token[]>([['root0', []]]);
  running = new Map<string, { request: TestRunRequest; content: Token[] }>();
  passed = new Map<string, Token[]>();
  merged = new Set<Token>();
  closed = new Set<number>();
  shown = new Map<number, PullRequestStatusUpdate>();
  refuseNextMerge = false;
  counter = 0;

  headSha(pr: number): string {
    return `h${pr}v${this.heads.get(pr) ?? 0}`;
  }

  async readPullRequest(_repo: unknown, prNumber: number): Promise<PullRequestFacts> {
    const merged = [...this.merged].some((t) => t.startsWith(`${prNumber}@`) && t.endsWith(this.headSha(prNumber)));
    return {
      title: `PR ${prNumber}`,
      author: 'dev',
      headSha: this.headSha(prNumber),
      baseBranch: 'main',
      open: !merged && !this.closed.has(prNumber),
      draft: false,
      merged,
      mergeability: 'mergeable',
      readAt: new Date(0),
    };
  }

  async readBranchHead(): Promise<string> {
    return this.branch.sha;
  }

  async startTestRun(request: TestRunRequest) {
    const base = this.shaContent.get(request.baseSha);
    expect(base).toBeDefined();
    const heads = request.heads.map((h) => `${h.prNumber}@${h.headSha}`);
    const culprit = request.heads.find((h, i) => request.heads.slice(0, i).some((b) => this.conflicts.has([b.prNumber, h.prNumber].sort().join('~'))));
    if (culprit) return { ok: false as const, reason: 'merge_conflict' as const, prNumber: culprit.prNumber };
    if (!this.running.has(request.runId) && !this.passed.has(request.runId)) this.running.set(request.runId, { request, content: [...(base as Token[]), ...heads] });
    return { ok: true as const, testBranch: `mq/main/${request.runId}`, testBranchSha: null };
  }

  async cancelTestRun(_repo: unknown, runId: string): Promise<void> {
    this.running.delete(runId);
  }

  async merge(request: MergeRequest) {
    const tested = this.passed.get(request.runId);
    const landed = `m:${request.runId}`;
    if (this.branch.sha === landed) return { ok: true as const, newBaseSha: landed }; // Asked again: same answer.
    // Only content that passed may reach the branch, on the base it was tested on.
    expect(tested).toBeDefined();
    if (this.branch.sha !== request.expectedBaseSha) return { ok: false as const, reason: 'base_moved' as const };
    if (request.heads.some((h) => h.headSha !== this.headSha(h.prNumber))) return { ok: false as const, reason: 'head_changed' as const };
    if (request.heads.some((h) => this.closed.has(h.prNumber))) return { ok: false as const, reason: 'pr_closed' as const };
    if (this.refuseNextMerge) {
      this.refuseNextMerge = false;
      return { ok: false as const, reason: 'blocked' as const, message: 'refused' };
    }
    const content = tested as Token[];
    const newHeads = content.filter((t) => !this.branch.content.includes(t));
    expect(newHeads.sort()).toEqual(request.heads.map((h) => `${h.prNumber}@${h.headSha}`).sort());
    for (const token of newHeads) {
      expect(this.merged.has(token)).toBe(false); // never twice
      expect(this.breaking.has(token)).toBe(false); // a broken head never merges
      this.merged.add(token);
    }
    this.branch = { sha: landed, content: [...this.branch.content, ...newHeads] };
    this.shaContent.set(landed, this.branch.content);
    return { ok: true as const, newBaseSha: landed };
  }

  async reportPullRequestStatus(update: PullRequestStatusUpdate): Promise<void> {
    this.shown.set(update.prNumber, update);
  }
}

export class RunnerWorld {
  readonly truth = new Truth();
  /** The API's view of the queue's entries, following the runner's decisions as a server's does. */
  private readonly views = new EnqueuedEntriesCache();
  now = 1_000_000;
  runner!: QueueRunner;
  private pullRequests!: PullRequestService;
  private events!: ReturnType<typeof hostEvents>;
  private readonly owners = { next: 0 };

  private constructor(
    readonly stores: Stores,
    readonly queue: QueueRecord,
  ) {}

  static async create(stores: Stores, name: string): Promise<RunnerWorld> {
    const inserted = await stores.queues.insert({
      repo: { host: HOST, owner: 'acme', name },
      targetBranch: 'main',
      config: { ...DEFAULT_QUEUE_CONFIG, concurrency: 2, requiredStatuses: ['ci'] },
      requestedState: 'RUNNING',
      modeSwitchStartedAt: null,
      createdAt: new Date(0),
      updatedAt: new Date(0),
    });
    if (!inserted.ok) throw new Error('queue exists');
    const world = new RunnerWorld(stores, inserted.value);
    await world.startRunner();
    return world;
  }

  private get ref() {
    return { repo: this.queue.repo, targetBranch: 'main' };
  }

  /** A runner as a replica would start one; a small snapshot interval exercises compaction and replay. */
  private async startRunner(): Promise<void> {
    this.runner = new QueueRunner({
      stores: this.stores,
      hosts: gitHostRegistry({ [HOST]: this.truth }),
      log: silent,
      owner: `replica-${this.owners.next++}`,
      now: () => this.now,
      pollMs: 60_000,
      snapshotEvery: 4,
      retryDelayMs: () => 1,
    });
    this.runner.onRecorded((change) => void this.views.recorded(this.stores, change));
    this.events = hostEvents(this.runner, this.stores);
    this.pullRequests = pullRequestService(this.stores, gitHostRegistry({ [HOST]: this.truth }), this.runner, silent, () => new Date(this.now));
    // Not start(): that resumes every queue in the database, other worlds' too. The first decision loads this one.
    await this.runner.dispatch(this.queue.id, { type: 'base_moved', sha: this.truth.branch.sha });
  }

  async settle(): Promise<void> {
    await this.runner.settled(this.queue.id);
  }

  private async entries() {
    return (await this.stores.entries.listEnqueued(this.queue.id)).sort((a, b) => a.prNumber - b.prNumber);
  }

  private async pick(pick: number) {
    const entries = await this.entries();
    return entries.length === 0 ? undefined : entries[pick % entries.length];
  }

  async apply(c: Command): Promise<void> {
    const { truth } = this;
    switch (c.kind) {
      case 'submit': {
        if ((await this.entries()).some((e) => e.prNumber === c.pr)) return;
        truth.closed.delete(c.pr);
        if ([...truth.merged].some((t) => t.startsWith(`${c.pr}@`))) truth.heads.set(c.pr, (truth.heads.get(c.pr) ?? 0) + 1); // A new change under the same number.
        if (c.breaks) truth.breaking.add(`${c.pr}@${truth.headSha(c.pr)}`);
        if (c.conflictsWith !== null && c.conflictsWith !== c.pr) truth.conflicts.add([c.pr, c.conflictsWith].sort().join('~'));
        await this.pullRequests.submit({ ...this.ref, prNumber: c.pr, priority: c.priority, noBatch: c.noBatch });
        break;
      }
      case 'finish': {
        const runs = [...truth.running.entries()];
        if (runs.length === 0) return;
        const [runId, { request, content }] = runs[c.pick % runs.length] as (typeof runs)[number];
        truth.running.delete(runId);
        const passed = !content.some((t) => truth.breaking.has(t)) && !c.flaky;
        if (passed) truth.passed.set(runId, content);
        await this.events.testRunFinished({ queueId: request.queueId, runId, passed, checkRuns: [], failedChecks: passed ? [] : ['ci'] });
        break;
      }
      case 'completeMerge':
        truth.refuseNextMerge = !c.ok;
        break;
      case 'cancel': {
        const entry = await this.pick(c.pick);
        if (entry) await this.pullRequests.cancel({ ...this.ref, prNumber: entry.prNumber });
        break;
      }
      case 'push': {
        const entry = await this.pick(c.pick);
        if (!entry) return;
        truth.heads.set(entry.prNumber, (truth.heads.get(entry.prNumber) ?? 0) + 1);
        await this.events.pullRequestChanged(this.queue.repo, entry.prNumber);
        break;
      }
      case 'priority': {
        const entry = await this.pick(c.pick);
        if (entry) await this.pullRequests.submit({ ...this.ref, prNumber: entry.prNumber, priority: c.priority });
        break;
      }
      case 'restartTests': {
        const entry = await this.pick(c.pick);
        if (entry) await this.pullRequests.restart({ ...this.ref, prNumber: entry.prNumber });
        break;
      }
      case 'config': {
        await this.changeConfig({ ...this.queue.config, ...c.config, mode: 'single' as const }, c.requestedState);
        break;
      }
      case 'baseMoved': {
        const sha = `x${++truth.counter}`;
        truth.branch = { sha, content: [] };
        truth.shaContent.set(sha, []);
        await this.events.branchMoved(this.queue.repo, 'main', sha);
        break;
      }
      case 'tick':
        this.now += c.minutes * MINUTE;
        await this.runner.record(this.queue.id, { type: 'tick' });
        break;
      case 'runnerRestart':
        // A replica dies and another takes over from what is stored.
        await this.runner.stop();
        await this.startRunner();
        break;
    }
    await this.settle();
    await this.check();
  }

  /** As updateQueue does: the queue record first, then the runner is told (its writer decides with what the record holds). */
  private async changeConfig(config: QueueConfig, requestedState: RequestedQueueState): Promise<void> {
    await this.stores.queues.update(this.queue.id, { config, requestedState, updatedAt: new Date(this.now) });
    await this.runner.dispatch(this.queue.id, { type: 'config_changed', config, requestedState });
  }

  /** What the database, the engine and the host show agree. */
  async check(): Promise<void> {
    const state = await this.runner.engineState(this.queue.id);
    const engineStates = new Map(state?.entries.map((e) => [e.id, e.state]));
    for (const entry of await this.entries()) {
      expect(engineStates.get(entry.id) ?? 'gone').toBe(entry.state);
    }
    for (const [id] of engineStates) expect((await this.stores.entries.findById(id))?.state).toBe(engineStates.get(id));
    // What a view shows, followed decision by decision, is what reading every entry again shows.
    expect(await this.views.enqueued(this.stores, this.queue.id)).toEqual(await this.stores.entries.listEnqueued(this.queue.id));
    const running = state?.runs.filter((r) => r.status === 'running').length ?? 0;
    expect(running).toBeLessThanOrEqual(state?.config.concurrency ?? 0);
  }

  /** Lets everything finish by the truth (no flakes), with the queue running. */
  async drain(): Promise<void> {
    this.truth.refuseNextMerge = false;
    await this.changeConfig({ ...this.queue.config, mode: 'single' }, 'RUNNING');
    await this.settle();
    for (let i = 0; i < 300; i++) {
      const state = await this.runner.engineState(this.queue.id);
      if (this.truth.running.size > 0) await this.apply({ kind: 'finish', pick: 0, flaky: false });
      else if (state && (state.runs.length > 0 || state.entries.some((e) => e.state !== 'NOT_READY'))) await this.apply({ kind: 'tick', minutes: 61 });
      else return this.finalChecks();
    }
    throw new Error('the queue did not drain');
  }

  /** Every PR ended once per attempt, and the host shows each PR's final state. */
  private async finalChecks(): Promise<void> {
    for (const pr of new Set([...this.truth.heads.keys(), ...(await this.allPrNumbers())])) {
      const entry = await this.stores.entries.find(this.queue.id, pr);
      if (!entry) continue;
      expect(entry.state).toBe(isTerminal(entry.state) ? entry.state : 'NOT_READY');
      const terminal = entry.timeline.filter((e) => isTerminal(e.state)).length;
      expect(terminal).toBeLessThanOrEqual(entry.attempt);
      const shown = this.truth.shown.get(pr);
      if (shown && isTerminal(entry.state)) expect(shown.state).toBe(entry.state);
    }
  }

  private async allPrNumbers(): Promise<number[]> {
    const page = await this.stores.entries.page({ queueId: this.queue.id, take: 1000 });
    return page.map((e) => e.prNumber);
  }

  async close(): Promise<void> {
    await this.runner.stop();
  }
}
