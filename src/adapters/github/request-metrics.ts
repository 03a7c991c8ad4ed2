/** Where GitHub call counts and the rate-limit budget are recorded (ServiceMetrics fits). */
export interface GitHubRequestRecorder {
  githubRequests: { inc(labels: { method: string; status: string }): void };
  githubRateLimitRemaining: { set(value: number): void };
}

interface HookedOctokit {
  hook: {
    after(name: 'request', hook: (response: { status: number; headers: Record<string, unknown> }, options: { method?: string; url?: string }) => void): void;
    error(name: 'request', hook: (error: { status?: number; response?: { headers?: Record<string, unknown> } }, options: { method?: string }) => unknown): void;
  };
}

/**
 * An Octokit plugin that counts every GitHub call by method and status and
 * keeps the last `x-ratelimit-remaining` GitHub reported, so operators see a
 * budget running out before GitHub starts refusing.
 */
export function requestMetrics(recorder: GitHubRequestRecorder): (octokit: object) => object {
  return (octokit) => {
    const hooked = octokit as HookedOctokit;
    const remaining = (headers: Record<string, unknown> | undefined) => {
      const value = Number(headers?.['x-ratelimit-remaining']);
      if (Number.isFinite(value)) recorder.githubRateLimitRemaining.set(value);
    };
    hooked.hook.after('request', (response, options) => {
      recorder.githubRequests.inc({ method: options.method ?? 'GET', status: String(response.status) });
      remaining(response.headers);
    });
    hooked.hook.error('request', (error, options) => {
      recorder.githubRequests.inc({ method: options.method ?? 'GET', status: String(error.status ?? 'network') });
      remaining(error.response?.headers);
      throw error;
    });
    return {};
  };
}
