import { ProbotOctokit } from 'probot';
import { backOffOptions, retryLogging, type BackOffTuning } from './back-off.js';
import type { GitHubLog } from './github-client.js';
import { requestMetrics, type GitHubRequestRecorder } from './request-metrics.js';

/**
 * The Octokit class to give Probot: `new Probot({ appId, privateKey, secret,
 * Octokit: queueProbotOctokit(log) })`. Probot 14's ProbotOctokit already has
 * plugin-retry and plugin-throttling, but Probot configures throttling so that
 * secondary rate limits are only logged, not retried, and retries silently.
 * Probot builds every Octokit it hands out (app, `probot.auth(installationId)`,
 * `context.octokit`) from this class, and Octokit's `defaults` functions run
 * at each construction after Probot's own, so these options win everywhere.
 */
export function queueProbotOctokit(log: GitHubLog, tuning: BackOffTuning = {}, recorder?: GitHubRequestRecorder): typeof ProbotOctokit {
  const backOff = backOffOptions(log, tuning);
  const plugins = [retryLogging(log, tuning), ...(recorder ? [requestMetrics(recorder)] : [])];
  return ProbotOctokit.plugin(...plugins).defaults((instance: { throttle?: { enabled?: boolean }; retry?: object }) => ({
    ...instance,
    retry: { ...backOff.retry, ...instance.retry },
    // Probot disables throttling on purpose in some cases (no installation id); keep that, and keep its per-installation `id`.
    throttle: instance.throttle?.enabled === false ? instance.throttle : { ...instance.throttle, ...backOff.throttle },
  }));
}
