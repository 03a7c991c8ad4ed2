import type { PullRequestFacts } from '../domain/records.js';
import type { RepoRef } from '../domain/repo.js';

/**
 * A repository host (GitHub, the sandbox): where PR facts come from and, in
 * later issues, where test branches are built and PRs merged. Adapters live in
 * src/adapters/; the rest of the code knows only this port.
 */
export interface GitHost {
  /** The PR as the host sees it now, or null when the host has no such PR. */
  readPullRequest(repo: RepoRef, prNumber: number): Promise<PullRequestFacts | null>;
}

/** Picks the adapter for a `repo.host`; undefined when none is configured for it. */
export interface GitHostRegistry {
  forHost(host: string): GitHost | undefined;
}

/** A registry of the adapters configured at start-up, keyed by lower-cased host name. */
export function gitHostRegistry(hosts: Record<string, GitHost> = {}): GitHostRegistry {
  const byName = new Map(Object.entries(hosts).map(([name, host]) => [name.toLowerCase(), host]));
  return { forHost: (host) => byName.get(host.toLowerCase()) };
}
