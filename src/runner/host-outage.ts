/**
 * A host that fails is not a PR that fails. These tell an outage (retry later,
 * the PR keeps its place) from a refusal (a verdict the engine must hear).
 */

/** Whether a host error is worth retrying: no answer at all, a 5xx, a time-out or a rate limit. */
export function isTransientHostError(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status;
  // No HTTP status: the network, a time-out, the database. Nothing was decided.
  if (typeof status !== 'number') return true;
  if (status >= 500 || status === 429 || status === 408) return true;
  const message = error instanceof Error ? error.message : '';
  return status === 403 && /rate limit|abuse/i.test(message);
}

/** The host's words for the operator, without anything that could be a credential. */
export function describeHostError(error: unknown): string {
  const status = (error as { status?: unknown } | null)?.status;
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 200) ?? '';
  return typeof status === 'number' ? `${status}: ${message}` : message || 'no answer';
}

/** Waits before retry `attempt` (1, 2…): doubling from 1 s up to a minute, with ±20% jitter so replicas spread out. */
export function retryDelayMs(attempt: number, random: () => number = Math.random, baseMs = 1_000, maxMs = 60_000): number {
  const plain = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(plain * (0.8 + 0.4 * random()));
}
