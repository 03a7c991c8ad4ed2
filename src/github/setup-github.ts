import type { FastifyPluginAsync } from 'fastify';
import { Probot } from 'probot';
import type { Logger } from 'pino';
import { fetchWithTimeout, GitHubHost, installationOctokits, probotAppAuth, queueProbotOctokit, type BackOffTuning, type GitHubRequestRecorder, type InstallationOctokits } from '../adapters/github/index.js';
import type { ApiDeps } from '../api/deps.js';
import type { HostEvents } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import type { MaintenanceTask } from '../runner/maintenance.js';
import { apiBaseUrl } from './api-base-url.js';
import { githubApp } from './github-app.js';
import { webhookRoute } from './webhook-route.js';
import { DeliveryHandler } from './delivery-handler.js';
import { redeliverFailed } from './redelivery.js';

/** How often check results of runs in progress are read without a webhook asking. */
const RECONCILE_MS = 2 * 60_000;
/** How often GitHub is asked for the deliveries it could not make (redelivery.ts): one request when none failed. */
const REDELIVERY_MS = 5 * 60_000;

/** The GitHub App's credentials, all present (config/env.ts checks that). */
export interface GitHubAppConfig {
  appId: string;
  privateKey: string;
  webhookSecret: string;
  /** GitHub Enterprise host name (Server, or a GHE.com `<sub>.ghe.com`); github.com when absent. */
  gheHost?: string;
  /** The REST API's address when it is not the host's default (tests: a fake on 127.0.0.1). */
  baseUrl?: string;
  /** Back-off and throttling of GitHub calls (tests shorten them). */
  tuning?: BackOffTuning;
  /** Counts GitHub calls and keeps the rate-limit budget, for operators. */
  metrics?: GitHubRequestRecorder;
  /** How often results of runs in progress are read without a webhook (RECONCILE_MS; tests shorten it). */
  reconcileMs?: number;
  /** How often failed webhook deliveries are asked for again (REDELIVERY_MS; tests shorten it). */
  redeliveryMs?: number;
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
  const apiUrl = apiBaseUrl(config);
  const probot = new Probot({
    appId: Number(config.appId),
    // Environments often carry a PEM on one line with literal \n.
    privateKey: config.privateKey.replace(/\\n/g, '\n'),
    secret: config.webhookSecret,
    ...(apiUrl ? { baseUrl: apiUrl } : {}),
    log: log.child({ name: 'probot' }),
    Octokit: queueProbotOctokit(log, config.tuning, config.metrics),
    // Every Octokit Probot builds (app, installations, webhook contexts) fetches through this.
    request: { fetch: fetchWithTimeout(config.tuning?.requestTimeoutMs ?? 30_000) },
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
    // Bypass lists name apps by slug: GET /app with the App's own (JWT) credentials.
    appSlug: async () => {
      const app = await probot.auth();
      const { data } = await app.request('GET /app');
      return data?.slug ?? null;
    },
  });
  // Probot's webhooks exist once its app is loaded (webhooks() below): looked up when a delivery is handled.
  const receiver = { verify: (payload: string, signature: string) => probot.webhooks.verify(payload, signature), receive: (event: Parameters<typeof probot.webhooks.receive>[0]) => probot.webhooks.receive(event) };
  const deliveryHandler = new DeliveryHandler({ receiver, deliveries: stores.deliveries, log });
  return {
    hostName,
    host,
    maintenanceTasks: [
      // Results arrive by webhook; this catches one GitHub lost, slowly (polling every run would spend the API budget).
      { name: 'reconcile GitHub check results', everyMs: config.reconcileMs ?? RECONCILE_MS, run: () => host.reconcile() },
      { name: 'retry webhook deliveries not handled', run: () => deliveryHandler.retryUnhandled() },
      {
        name: 'ask GitHub again for webhook deliveries that failed',
        everyMs: config.redeliveryMs ?? REDELIVERY_MS,
        run: redeliverFailed({
          // The App's own (JWT) credentials: the deliveries API is the App's, not an installation's.
          app: async () => {
            const app = await probot.auth();
            return { request: (route, parameters) => app.request(route, parameters) };
          },
          deliveries: stores.deliveries,
          log,
          everyMs: config.redeliveryMs ?? REDELIVERY_MS,
        }),
      },
    ],
    bindEvents(bound) {
      events = bound;
    },
    async webhooks(deps, bound) {
      await probot.load(
        githubApp({
          stores,
          pullRequests: deps.pullRequests,
          queues: deps.queues,
          events: bound,
          checksChanged: async (repo, sha) => (await host.onCommitChecksChanged(repo, sha)) !== 'no_run',
          enqueued: (queueId) => deps.enqueuedCache.enqueued(stores, queueId),
          hostName,
          rememberInstallation: (repo, installationId) => octokits.remember(repo, installationId),
          appId: Number(config.appId),
          forgetInstallation: (repo) => octokits.forget(repo),
          hostAccess: async (queueId, change) =>
            bound.hostAccess(queueId, change),
        }),
      );
      return webhookRoute({ receiver, deliveries: stores.deliveries, handler: deliveryHandler });
    },
  };
}
