import { Octokit } from '@octokit/rest';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { backOffOptions, fetchWithTimeout, retryLogging, type BackOffTuning } from './back-off.js';
import type { GitHubClient, GitHubLog } from './github-client.js';

export interface GitHubOctokitOptions extends BackOffTuning {
  log: GitHubLog;
  /** A token, or the options of `authStrategy` (e.g. @octokit/auth-app's createAppAuth). */
  auth?: unknown;
  authStrategy?: unknown;
  /** `https://api.github.com`, or `https://<GHE_HOST>/api/v3` for GitHub Enterprise Server. */
  baseUrl?: string;
}

/**
 * An Octokit with retry and throttling, for use without Probot (scripts, tests,
 * an app authenticated some other way). With Probot, use `queueProbotOctokit`
 * instead so its installation Octokits get the same behaviour.
 */
export function createGitHubOctokit(options: GitHubOctokitOptions): GitHubClient {
  const { log, auth, authStrategy, baseUrl, ...tuning } = options;
  // retryLogging comes after retry: it wraps what retry set up.
  const GitHubOctokit = Octokit.plugin(throttling, retry, retryLogging(log, tuning));
  return new GitHubOctokit({
    ...backOffOptions(log, tuning),
    // Octokit's request log calls every non-2xx an error, expected 404s included: the adapter logs what matters itself.
    log: { debug: () => {}, info: () => {}, warn: (message: string) => log.warn({}, message), error: () => {} },
    ...(auth !== undefined ? { auth } : {}),
    ...(authStrategy !== undefined ? { authStrategy: authStrategy as never } : {}),
    ...(baseUrl ? { baseUrl } : {}),
    request: { fetch: fetchWithTimeout(tuning.requestTimeoutMs ?? 30_000) },
  });
}
