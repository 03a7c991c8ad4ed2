import { useEffect, useState } from 'preact/hooks';
import type { RepoRef } from './api.js';

/** A queue as pages name it in their address. */
export interface QueueRef {
  repo: RepoRef;
  targetBranch: string;
}

export type Route = { page: 'queues' } | { page: 'queue'; queue: QueueRef } | { page: 'pr'; queue: QueueRef; number: number } | { page: 'health'; queue: QueueRef } | { page: 'settings'; queue: QueueRef };

/** Hash addresses (#/q/host/owner/name/branch[/pr/N|/health|/settings]): one HTML file, links that survive a reload. */
export function queueHref(queue: QueueRef, rest = ''): string {
  const { host, owner, name } = queue.repo;
  return `#/q/${[host, owner, name, queue.targetBranch].map(encodeURIComponent).join('/')}${rest}`;
}

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] !== 'q' || parts.length < 5) return { page: 'queues' };
  const [, host, owner, name, targetBranch, kind, n] = parts as [string, string, string, string, string, string?, string?];
  const queue = { repo: { host, owner, name }, targetBranch };
  if (kind === 'pr' && n && /^\d+$/.test(n)) return { page: 'pr', queue, number: Number(n) };
  if (kind === 'health') return { page: 'health', queue };
  if (kind === 'settings') return { page: 'settings', queue };
  return { page: 'queue', queue };
}

export function useRoute(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return hash;
}

/**
 * A link to another system (a check's details): only http(s). Preact renders a
 * `javascript:` href as it is, and the URL comes from CI through the host.
 */
export function externalHref(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const { protocol } = new URL(url);
    return protocol === 'https:' || protocol === 'http:' ? url : undefined;
  } catch {
    return undefined;
  }
}
