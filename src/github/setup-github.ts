import type { FastifyPluginAsync } from 'fastify';
import { Probot } from 'probot';
import type { Logger } from 'pino';
import { GitHubHost, installationOctokits, probotAppAuth, queueProbotOctokit, type BackOffTuning, type GitHubRequestRecorder, type InstallationOctokits } from '../adapters/github/index.js';
import type { ApiDeps } from '../api/deps.js';
import type { HostEvents } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import type { MaintenanceTask } from '../runner/maintenance.js';
import { githubApp } from './github-app.js';
import { webhookRoute } from './webhook-route.js';
import { DeliveryHandler } from './delivery-handler.js';

/** The GitHub App's credentials, all present (config/env.ts checks that). */
export interface GitHubAppConfig {
  appId: string;
  privateKey: string;
  webhookSecret: string;
  /** GitHub Enterprise Server host name; github.com when absent. */
  gheHost?: string;
  /** The REST API's address when it is not the host's default (tests: a fake on 127.0.0.1). */
  baseUrl?: string;
  /** Back-off and throttling of GitHub calls (tests shorten them). */
  tuning?: BackOffTuning;
  /** Counts GitHub calls and keeps the rate-limit budget, for operators. */
  metrics?: GitHubRequestRecorder;
}

export interface GitHubSetup {
  /** Queues on this host name are GitHub's. */
  hostName: string;
  host: GitHubHost;
  maintenanceTasks: MaintenanceTask[];
  /** Registers Probot's handlers and the webhook route, given the API's use cases. */
  webhooks(deps: ApiDeps, events: HostEvents): Promise<FastifyPluginAsync>;
  /** Binds host events once the runner exists (the host reports CI results through them). */
  bindEvents(events: HostEvents): void;
}

/**
 * Probot and the GitHub host, built from the App's credentials. Installation
 * tokens come from `probot.auth(installationId)`; every Octokit Probot builds
 * retries 5xx and secondary rate limits with back-off (queueProbotOctokit).
 */
export function setupGitHub(config: GitHubAppConfig, stores: Stores, log: Logger): GitHubSetup {
  const hostName = (config.gheHost ?? 'github.com').toLowerCase();
  const probot = new Probot({
    appId: Number(config.appId),
    // Environments often carry a PEM on one line with literal \n.
    privateKey: config.privateKey.replace(/\\n/g, '\n'),
    secret: config.webhookSecret,
    ...(config.baseUrl ? { baseUrl: config.baseUrl } : config.gheHost ? { baseUrl: `https://${config.gheHost}/api/v3` } : {}),
    log: log.child({ name: 'probot' }),
    Octokit: queueProbotOctokit(log, config.tuning, config.metrics),
  });
  const octokits: InstallationOctokits = installationOctokits(probotAppAuth(probot));
  let events: HostEvents | undefined;
  const host = new GitHubHost({
    octokitFor: octokits.octokitFor,
    events: () => {
      if (!events) throw new Error('GitHub host events used before the runner exists');
      return events;
    },
    testRuns: stores.testRuns,
    queues: stores.queues,
    log,
    hostName,
  });
  // Probot's webhooks exist once its app is loaded (webhooks() below): looked up when a delivery is handled.
  const receiver = { verify: (payload: string, signature: string) => probot.webhooks.verify(payload, signature), receive: (event: Parameters<typeof probot.webhooks.receive>[0]) => probot.webhooks.receive(event) };
  const deliveryHandler = new DeliveryHandler({ receiver, deliveries: stores.deliveries, log });
  return {
    hostName,
    host,
    maintenanceTasks: [
      { name: 'reconcile GitHub check results', run: () => host.reconcile() },
      { name: 'retry webhook deliveries not handled', run: () => deliveryHandler.retryUnhandled() },
    ],
    bindEvents(bound) {
      events = bound;
    },
    async webhooks(deps, bound) {
      await probot.load(
        githubApp({
          stores,
          pullRequests: deps.pullRequests,
          events: bound,
          checksChanged: async (repo, sha) => {
            await host.onCommitChecksChanged(repo, sha);
          },
          hostName,
          rememberInstallation: (repo, installationId) => octokits.remember(repo, installationId),
        }),
      );
      return webhookRoute({ receiver, deliveries: stores.deliveries, handler: deliveryHandler });
    },
  };
}
