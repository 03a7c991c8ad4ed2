/**
 * Where GitHub's REST API lives for a host: github.com's own address (Octokit's
 * default, undefined here), `https://api.<sub>.ghe.com` for GitHub Enterprise
 * Cloud with data residency (GHE.com), `https://<host>/api/v3` for GitHub
 * Enterprise Server. An explicit `GITHUB_API_URL` wins over all of them.
 */
export function apiBaseUrl(config: { gheHost?: string; baseUrl?: string }): string | undefined {
  if (config.baseUrl) return config.baseUrl.replace(/\/+$/, '');
  const host = config.gheHost?.toLowerCase();
  if (!host || host === 'github.com') return undefined;
  if (host.endsWith('.ghe.com')) return `https://api.${host.replace(/^api\./, '')}`;
  return `https://${host}/api/v3`;
}
