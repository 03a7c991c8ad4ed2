import { SANDBOX_HOST, SandboxHost } from './adapters/sandbox/sandbox-host.js';
import { gitHostRegistry, type GitHost, type GitHostRegistry, type HostEvents } from './ports/git-host.js';
import type { Stores } from './ports/stores.js';
import { hostEvents } from './runner/host-events.js';
import { QueueRunner, type RunnerLog } from './runner/queue-runner.js';

export interface QueueServices {
  gitHosts: GitHostRegistry;
  runner: QueueRunner;
  sandbox: SandboxHost | undefined;
  events: HostEvents;
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
  const runner = new QueueRunner({ stores: options.stores, hosts: gitHosts, log: options.log, pollMs: options.pollMs, owner: options.owner });
  const events = hostEvents(runner, options.stores, gitHosts);
  bound.events = events;
  return { gitHosts, runner, sandbox, events };
}
