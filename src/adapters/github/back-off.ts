import type { GitHubLog } from './github-client.js';

/**
 * How Octokit backs off instead of failing: @octokit/plugin-retry retries 5xx
 * answers, @octokit/plugin-throttling waits out rate limits. A failed GitHub
 * call fails a test run or a merge, which ejects PRs that did nothing wrong,
 * so waiting is always the better answer to GitHub being busy.
 */
export interface BackOffTuning {
  /** Retries of a 5xx answer (plugin-retry waits 1, 4, 9... units between them). Default 3. */
  retries?: number;
  /** Retries after a primary or secondary rate limit, each after GitHub's retry-after. Default 3. */
  rateLimitRetries?: number;
  /** Milliseconds per second of back-off, for both plugins. Default 1000; tests make it tiny. */
  unitMs?: number;
  /**
   * plugin-throttling also spaces write requests (about one a second per
   * installation), as GitHub asks of integrations. Default true; end-to-end
   * tests against a local fake turn it off to run at full speed.
   */
  spaceWrites?: boolean;
  /**
   * How long one GitHub request may take before it is abandoned (a time-out is
   * an outage: retried with back-off, like a 5xx). Octokit sets no limit, and a
   * request GitHub never answers would hold the queue's actions for good.
   * Default 30,000 ms.
   */
  requestTimeoutMs?: number;
}

/** A fetch for Octokit's `request.fetch` that gives up after `timeoutMs` unless the caller brought its own signal. */
export function fetchWithTimeout(timeoutMs: number, base?: typeof fetch): typeof fetch {
  // The global fetch is looked up per call: test interceptors replace it after this is built.
  return (input, init) => (base ?? globalThis.fetch)(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(timeoutMs) });
}

type LimitHandler = (retryAfter: number, options: { method?: string; url?: string }, octokit: unknown, retryCount: number) => boolean;

/** The `retry` and `throttle` options of an Octokit with both plugins. */
export interface BackOffOptions {
  retry: { retries: number; retryAfterBaseValue: number; doNotRetry: number[] };
  throttle: { enabled: boolean; retryAfterBaseValue: number; onRateLimit: LimitHandler; onSecondaryRateLimit: LimitHandler };
}

export function backOffOptions(log: GitHubLog, tuning: BackOffTuning = {}): BackOffOptions {
  const unitMs = tuning.unitMs ?? 1000;
  const rateLimitRetries = tuning.rateLimitRetries ?? 3;
  const onLimit =
    (kind: string): LimitHandler =>
    (retryAfter, options, _octokit, retryCount) => {
      const retrying = retryCount < rateLimitRetries;
      log.warn({ method: options.method, url: options.url, retryAfterSeconds: retryAfter, attempt: retryCount + 1, retrying }, `GitHub ${kind} rate limit hit`);
      return retrying;
    };
  return {
    // plugin-retry's own list plus 405 and 409: a refused merge or a merge conflict is an answer, not a failure (retrying it only spends requests).
    retry: { retries: tuning.retries ?? 3, retryAfterBaseValue: unitMs, doNotRetry: [400, 401, 403, 404, 405, 409, 410, 422, 451] },
    // Probot's own handler does not retry secondary rate limits; these do, as GitHub asks (after retry-after).
    throttle: { enabled: tuning.spaceWrites ?? true, retryAfterBaseValue: unitMs, onRateLimit: onLimit('primary'), onSecondaryRateLimit: onLimit('secondary') },
  };
}

interface RetryableError {
  status?: number;
  request?: { method?: string; url?: string; request?: { retryCount?: number } };
}
type RetryRequest = (error: RetryableError, retries: number, retryAfter: number) => unknown;

/**
 * An Octokit plugin that logs each retry of plugin-retry, which retries
 * silently. It must be applied after plugin-retry: it wraps the documented
 * `octokit.retry.retryRequest`, which plugin-retry calls for every failed
 * attempt it considers retrying.
 */
export function retryLogging(log: GitHubLog, tuning: BackOffTuning = {}): (octokit: object) => object {
  const unitMs = tuning.unitMs ?? 1000;
  return (octokit) => {
    const retry = (octokit as { retry?: { retryRequest: RetryRequest } }).retry;
    if (!retry) return {};
    const retryRequest = retry.retryRequest;
    retry.retryRequest = (error, retries, retryAfter) => {
      const attempt = (error.request?.request?.retryCount ?? 0) + 1;
      if (attempt <= retries) {
        log.warn(
          { method: error.request?.method, url: error.request?.url, status: error.status, attempt, retries, retryInMs: retryAfter * unitMs },
          'GitHub request failed; retrying with back-off',
        );
      }
      return retryRequest(error, retries, retryAfter);
    };
    return {};
  };
}
