import { SANDBOX_HOST, SandboxHost } from './adapters/sandbox/sandbox-host.js';
import { gitHostRegistry, type GitHost, type GitHostRegistry, type HostEvents } from './ports/git-host.js';
import type { Stores } from './ports/stores.js';
import type { WebhookOutbox } from './ports/webhook-outbox.js';
import type { ServiceMetrics } from './observability/service-metrics.js';
import { hostEvents } from './runner/host-events.js';
import { Maintenance, type MaintenanceTask } from './runner/maintenance.js';
import { QueueRunner, type RunnerLog } from './runner/queue-runner.js';
import { readBaseHeads, refreshWaitingFacts } from './runner/refresh-waiting-facts.js';
import { forgetFinishedDeliveries, OUTBOX_MEMORY_MS } from './webhooks/outbox-retention.js';

/** GitHub redelivers within days; a week of delivery ids is plenty. */
const DELIVERY_MEMORY_MS = 7 * 24 * 60 * 60 * 1000;
/** How often what is kept for days (delivery ids, finished outgoing deliveries) is pruned. */
const PRUNE_MS = 10 * 60 * 1000;
/** How often copies of runs finished long ago are forgotten (the store's readers of recent runs scan the copies). */
const TEST_RUN_PRUNE_MS = 10 * 60_000;
/** How often the head of every busy queue's branch is read, in case a push webhook was lost. */
const BASE_HEAD_READ_MS = 5 * 60_000;

export interface QueueServices {
  gitHosts: GitHostRegistry;
  runner: QueueRunner;
  sandbox: SandboxHost | undefined;
  events: HostEvents;
  maintenance: Maintenance;
}

/**
 * Wires hosts and the queue runner together. Hosts report to the runner and
 * the runner acts through hosts, so the host events are bound once both exist.
 */
export function composeQueueServices(options: {
  stores: Stores;
  log: RunnerLog;
  sandbox: boolean;
  /** Scales sandbox CI durations (tests). */
  sandboxTimeScale?: number;
  /** More hosts by name (GitHub, test fakes). */
  hosts?: Record<string, GitHost>;
  pollMs?: number;
  /** This replica's name in queue leases; a restarted replica with the same name resumes at once. */
  owner?: string;
  /** More periodic work (e.g. the GitHub host's reconcile of check results). */
  maintenanceTasks?: MaintenanceTask[];
  outbox?: WebhookOutbox;
  metrics?: ServiceMetrics;
  /** Back-off of host actions through an outage (tests shorten it). */
  hostRetryDelayMs?: (attempt: number) => number;
  /** How long this replica's hold on a queue lasts unless renewed. */
  leaseTtlMs?: number;
}): QueueServices {
  const bound: { events?: HostEvents } = {};
  const boundEvents = (): HostEvents => {
    if (!bound.events) throw new Error('host events used before the runner exists');
    return bound.events;
  };
  const sandbox = options.sandbox
    ? new SandboxHost({
        store: options.stores.sandbox,
        events: boundEvents,
        timeScale: options.sandboxTimeScale,
        onError: (error) => options.log.warn({ err: error }, 'sandbox: could not report a CI result'),
      })
    : undefined;
  const gitHosts = gitHostRegistry({ ...options.hosts, ...(sandbox ? { [SANDBOX_HOST]: sandbox } : {}) });
  const runner = new QueueRunner({
    stores: options.stores,
    hosts: gitHosts,
    log: options.log,
    pollMs: options.pollMs,
    owner: options.owner,
    ...(options.hostRetryDelayMs ? { retryDelayMs: options.hostRetryDelayMs } : {}),
    ...(options.leaseTtlMs ? { leaseTtlMs: options.leaseTtlMs } : {}),
    ...(options.outbox ? { outbox: options.outbox } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  const events = hostEvents(runner, options.stores);
  bound.events = events;
  const stores = options.stores;
  /** When each blocked PR's verdict was last looked at (refreshWaitingFacts), between rounds. */
  const verdictsChecked = new Map<string, number>();
  const maintenance = new Maintenance(
    [
      { name: 'refresh facts of waiting PRs', run: async () => refreshWaitingFacts(stores, events, (queueId) => runner.waitingPullRequests(queueId), await stores.engine.queueIds(), Date.now(), verdictsChecked) },
      // Push webhooks can be lost, and GitHub never redelivers: the head of every busy queue's branch is read now and then.
      { name: 'read target branch heads', everyMs: BASE_HEAD_READ_MS, run: async () => readBaseHeads(runner, (queueId) => runner.enqueuedCount(queueId), await stores.engine.queueIds()) },
      // Kept for days: pruned every few minutes, not every round (on the local FerretDB each prune reads the whole collection).
      { name: 'forget old webhook deliveries', everyMs: PRUNE_MS, run: () => stores.deliveries.prune(new Date(Date.now() - DELIVERY_MEMORY_MS)) },
      { name: 'prune recent test runs', everyMs: TEST_RUN_PRUNE_MS, run: () => stores.testRuns.prune(new Date()) },
      { name: 'forget finished outgoing webhook deliveries', everyMs: PRUNE_MS, run: () => forgetFinishedDeliveries(stores.webhooks, new Date(Date.now() - OUTBOX_MEMORY_MS)) },
      ...(options.maintenanceTasks ?? []),
    ],
    options.log,
  );
  return { gitHosts, runner, sandbox, events, maintenance };
}
