import { randomUUID } from 'node:crypto';
import { decide } from '../engine/decide.js';
import { initialEngineState } from '../engine/initial-state.js';
import type { EngineAction, EngineEvent, EngineState } from '../engine/model.js';
import type { GitHostRegistry } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import { executeActions, type ActionContext } from './execute-actions.js';
import { KeyedMutex } from '../concurrency/keyed-mutex.js';
import { Timers } from './timers.js';
import type { WebhookOutbox } from '../ports/webhook-outbox.js';
import type { ServiceMetrics } from '../observability/service-metrics.js';

/** The little of a logger the runner needs (pino fits). */
export interface RunnerLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface QueueRunnerOptions {
  stores: Stores;
  hosts: GitHostRegistry;
  log: RunnerLog;
  now?: () => number;
  /** This replica's name in leases. */
  owner?: string;
  leaseTtlMs?: number;
  /** How often to look for events another replica enqueued or a lease that expired. */
  pollMs?: number;
  /** Outgoing webhooks for the engine's emitted events. */
  outbox?: WebhookOutbox;
  /** Counts decisions and actions for operators. */
  metrics?: ServiceMetrics;
}

const BATCH = 100;

/**
 * The one writer per queue: events go to a durable inbox, and whoever holds the
 * queue's lease applies them in order through decide(), persists the new state
 * with its actions, then carries the actions out. A crash between the two
 * leaves the actions in the outbox, replayed on the next pump (they are
 * idempotent). In-process calls for one queue are serialized by a mutex.
 */
export class QueueRunner {
  private readonly mutex = new KeyedMutex();
  private readonly timers = new Timers();
  private readonly owner: string;
  private readonly now: () => number;
  private poller: NodeJS.Timeout | null = null;
  /** Queues whose lease this runner took, to give them up on a clean stop. */
  private readonly leased = new Set<string>();
  private stopped = false;

  constructor(private readonly options: QueueRunnerOptions) {
    this.owner = options.owner ?? `runner-${randomUUID()}`;
    this.now = options.now ?? (() => Date.now());
  }

  /** Records an event for a queue and applies it (and anything else waiting) if this replica may. */
  async dispatch(queueId: string, event: EngineEvent): Promise<void> {
    await this.options.stores.engine.enqueue(queueId, event, this.now());
    await this.pump(queueId);
  }

  /** Resumes every queue (outboxes, timers, runs in flight) and starts polling. */
  async start(): Promise<void> {
    for (const queueId of await this.options.stores.engine.queueIds()) {
      await this.pump(queueId, { resume: true });
    }
    const pollMs = this.options.pollMs ?? 2_000;
    this.poller = setInterval(() => void this.poll(), pollMs);
    this.poller.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.poller) clearInterval(this.poller);
    this.timers.clearAll();
    // Wait for work in progress, then hand the queues over at once instead of after the lease expires.
    for (const queueId of this.leased) {
      await this.mutex.run(queueId, () => this.options.stores.engine.releaseLease(queueId, this.owner, this.now()));
    }
    this.leased.clear();
  }

  /** Forgets a deleted queue. */
  async forget(queueId: string): Promise<void> {
    await this.mutex.run(queueId, async () => {
      this.timers.clear(queueId);
      await this.options.stores.engine.remove(queueId);
    });
  }

  /** The engine's current view of a queue (tests and diagnostics). */
  async engineState(queueId: string): Promise<EngineState | null> {
    return (await this.options.stores.engine.load(queueId))?.state ?? null;
  }

  private async poll(): Promise<void> {
    if (this.stopped) return;
    try {
      for (const queueId of await this.options.stores.engine.queuesWithPendingEvents()) await this.pump(queueId);
    } catch (error) {
      this.options.log.warn({ err: error }, 'queue poll failed');
    }
  }

  /** Applies what waits in the queue's inbox, if this replica holds (or can take) its lease. */
  pump(queueId: string, options: { resume?: boolean } = {}): Promise<void> {
    return this.mutex.run(queueId, async () => {
      if (this.stopped) return;
      const { stores, log } = this.options;
      const epoch = await stores.engine.acquireLease(queueId, this.owner, this.now(), this.options.leaseTtlMs ?? 30_000);
      if (epoch === null) return; // Another replica is the writer; it will see the inbox.
      this.leased.add(queueId);
      const queue = await stores.queues.findById(queueId);
      if (!queue) {
        await stores.engine.remove(queueId);
        return;
      }
      const record = await stores.engine.load(queueId);
      let state = record?.state ?? { ...initialEngineState(queue.targetBranch, queue.config), requestedState: queue.requestedState };
      const ctx: ActionContext = {
        queue,
        stores,
        hosts: this.options.hosts,
        log,
        timers: this.timers,
        runner: this,
        now: this.now,
        ...(this.options.outbox ? { outbox: this.options.outbox } : {}),
      };

      if (record && record.outbox.length > 0) {
        log.info({ queueId, actions: record.outbox.length }, 'replaying actions a previous writer persisted but may not have done');
        await executeActions(ctx, record.outbox);
      }
      if (options.resume) await this.resumeRunsInFlight(ctx, state);
      if (state.baseSha === null) {
        const head = await this.options.hosts.forHost(queue.repo.host)?.readBranchHead(queue.repo, queue.targetBranch);
        if (head) await stores.engine.enqueue(queueId, { type: 'base_moved', sha: head }, this.now());
      }
      if (options.resume) await stores.engine.enqueue(queueId, { type: 'tick' }, this.now());

      for (;;) {
        const events = await stores.engine.pending(queueId, BATCH);
        if (events.length === 0) break;
        const actions: EngineAction[] = [];
        for (const { event, at } of events) {
          const decision = decide(state, event, Math.max(at, 0));
          state = decision.state;
          actions.push(...decision.actions);
          this.options.metrics?.engineDecisions.inc({ event: event.type });
          for (const action of decision.actions) this.options.metrics?.engineActions.inc({ action: action.type });
        }
        // Persist, then act.
        if (!(await stores.engine.save({ queueId, state, outbox: actions, epoch }))) {
          log.warn({ queueId, epoch }, 'lost the queue lease to a newer writer; stopping');
          return;
        }
        await stores.engine.acknowledge(events.map((e) => e.id));
        await executeActions(ctx, actions);
        await stores.engine.save({ queueId, state, outbox: [], epoch });
      }
      await this.syncQueueState(queueId, state);
    });
  }

  /** Hosts may have lost CI jobs in a restart: asking again is idempotent. */
  private async resumeRunsInFlight(ctx: ActionContext, state: EngineState): Promise<void> {
    const running = state.runs.filter((r) => r.status === 'running');
    if (running.length > 0) await executeActions(ctx, running.map((run) => ({ type: 'start_run' as const, run })));
  }

  /** The API shows SWITCHING_MODES from the queue record: keep it in step with the engine. */
  private async syncQueueState(queueId: string, state: EngineState): Promise<void> {
    const queue = await this.options.stores.queues.findById(queueId);
    if (!queue) return;
    const switching = queue.modeSwitchStartedAt !== null;
    const engineSwitching = state.switchingToMode !== null;
    if (switching === engineSwitching) return;
    await this.options.stores.queues.update(queueId, {
      modeSwitchStartedAt: engineSwitching ? new Date(this.now()) : null,
      updatedAt: new Date(this.now()),
    });
  }
}
