/** A repository on a host, as clients name it (`repo` in every request). */
export interface RepoRef {
  host: string;
  owner: string;
  name: string;
}

/**
 * Hosts and owner/repository names are case-insensitive on GitHub; branch names
 * are not. The key is what lookups and uniqueness use; the RepoRef keeps the
 * spelling the client first used.
 */
export function repoKey(repo: RepoRef): string {
  return `${repo.host}/${repo.owner}/${repo.name}`.toLowerCase();
}

/** The organization a repository belongs to: what a token is scoped to. */
export function orgKey(host: string, owner: string): string {
  return `${host}/${owner}`.toLowerCase();
}
