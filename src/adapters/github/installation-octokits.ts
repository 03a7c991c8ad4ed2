import { repoKey, type RepoRef } from '../../domain/repo.js';
import { failedWith, getData, repoParams, type GitHubClient, type OctokitFor } from './github-client.js';
import type { InstallationData } from './github-types.js';

/** How to act as the GitHub App itself (JWT) and as one of its installations (installation token). */
export interface GitHubAppAuth {
  appOctokit(): Promise<GitHubClient>;
  installationOctokit(installationId: number): Promise<GitHubClient>;
}

/**
 * Probot's way in: `probot.auth()` is the app (JWT), `probot.auth(id)` an
 * installation; Probot caches installation tokens and refreshes them.
 */
export function probotAppAuth(probot: { auth(installationId?: number): Promise<GitHubClient> }): GitHubAppAuth {
  return { appOctokit: () => probot.auth(), installationOctokit: (id) => probot.auth(id) };
}

export interface InstallationOctokits {
  /** The installation Octokit for a repository (what GitHubHost's `octokitFor` wants). */
  octokitFor: OctokitFor;
  /** Webhook payloads carry the installation id: handlers save the lookup by telling it here. */
  remember(repo: RepoRef, installationId: number): void;
  /** Forgets a repository's installation (uninstalled, or moved to another installation). */
  forget(repo: RepoRef): void;
}

/** Thrown when the app is not installed on a repository the queue was asked to drive. */
export class AppNotInstalledError extends Error {
  constructor(readonly repo: RepoRef) {
    super(`The GitHub App is not installed on ${repo.owner}/${repo.name}`);
    this.name = 'AppNotInstalledError';
  }
}

/**
 * Thrown when GitHub refuses the App a token for the repository's installation
 * (the App is suspended on the account, or the installation is gone while its
 * id was still kept), or no longer takes the token it gave (401: revoked when
 * the App was uninstalled or suspended). No refusal of the repository's: like
 * AppNotInstalledError it carries no HTTP status, so the runner retries it as an
 * outage, which ends by itself once the App may act again (unsuspended,
 * installed again). GitHub's words are kept: a wrong private key shows here too.
 */
export class InstallationTokenRefusedError extends Error {
  constructor(
    readonly repo: RepoRef,
    cause: unknown,
  ) {
    super(`GitHub refused the App's token for ${repo.owner}/${repo.name} (the App suspended or uninstalled?): ${(cause as Error)?.message ?? cause}`, { cause });
    this.name = 'InstallationTokenRefusedError';
  }
}

/**
 * A failed request for an installation token (the auth strategy asks for one before a request, when it has none),
 * or a token GitHub no longer takes (401 on any request: authentication, never a repository's refusal).
 */
function tokenRefused(error: unknown): boolean {
  if (failedWith(error, 401)) return true;
  const url = (error as { request?: { url?: unknown } } | null)?.request?.url;
  return failedWith(error, 403, 404) && typeof url === 'string' && /\/app\/installations\/\d+\/access_tokens$/.test(url);
}

/**
 * Installation Octokits per repository: the installation id comes from
 * `GET /repos/{owner}/{repo}/installation` with the app's JWT and is kept for
 * `ttlMs` (an app can be reinstalled, which changes the id); one Octokit per
 * installation is kept for good, as its auth strategy renews the token itself.
 * Failed lookups are not kept, so the next call asks again.
 */
export function installationOctokits(auth: GitHubAppAuth, options: { ttlMs?: number; now?: () => number } = {}): InstallationOctokits {
  const ttlMs = options.ttlMs ?? 60 * 60 * 1000;
  const now = options.now ?? Date.now;
  const installations = new Map<string, { id: Promise<number>; at: number }>();
  const clients = new Map<number, Promise<GitHubClient>>();

  const lookUp = async (repo: RepoRef): Promise<number> => {
    try {
      const app = await auth.appOctokit();
      return (await getData<InstallationData>(app, 'GET /repos/{owner}/{repo}/installation', repoParams(repo))).id;
    } catch (error) {
      if (failedWith(error, 404)) throw new AppNotInstalledError(repo);
      throw error;
    }
  };

  const installationId = (repo: RepoRef): Promise<number> => {
    const key = repoKey(repo);
    const cached = installations.get(key);
    if (cached && now() - cached.at < ttlMs) return cached.id;
    const id = lookUp(repo);
    const entry = { id, at: now() };
    installations.set(key, entry);
    id.catch(() => {
      if (installations.get(key) === entry) installations.delete(key);
    });
    return id;
  };

  const client = (id: number): Promise<GitHubClient> => {
    let cached = clients.get(id);
    if (!cached) {
      cached = auth.installationOctokit(id);
      clients.set(id, cached);
      cached.catch(() => clients.delete(id));
    }
    return cached;
  };

  return {
    octokitFor: async (repo) => {
      const id = await installationId(repo);
      const pending = client(id);
      const octokit = await pending;
      return {
        request: async (route, parameters) => {
          try {
            return await octokit.request(route, parameters);
          } catch (error) {
            if (!tokenRefused(error)) throw error;
            // Asked again next time: a reinstalled App has a new id, an unsuspended one gives tokens again (a new
            // Octokit asks for a new token rather than keep sending the one refused).
            installations.delete(repoKey(repo));
            if (clients.get(id) === pending) clients.delete(id);
            throw new InstallationTokenRefusedError(repo, error);
          }
        },
      };
    },
    remember: (repo, id) => installations.set(repoKey(repo), { id: Promise.resolve(id), at: now() }),
    forget: (repo) => installations.delete(repoKey(repo)),
  };
}
