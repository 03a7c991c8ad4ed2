/**
 * What a repository host's failure means, as host adapters and the runner both read it: a host that fails is not
 * a PR that fails. An adapter throws what it cannot decide; the runner retries it through an outage when it is
 * transient, else settles it as a refusal (see runner/host-outage.ts).
 */

/**
 * A race lost on the host: the host answered, but another writer (a replica finishing late) changed what the action
 * stood on. Trying again wins it, so it is retried like an outage without being one, until it keeps happening.
 * Host adapters throw their own kinds of it (StagingMoved).
 */
export class HostContention extends Error {}

export function isHostContention(error: unknown): boolean {
  return error instanceof HostContention;
}

/**
 * The host's own answer behind a race lost, when it is one a refusal also gives (GitHub's 422 "Reference update
 * failed" answers a lost race and a ruleset's refusal alike): once the race keeps being lost, that answer is the
 * verdict, not an outage without end. Null for a race the adapter saw itself (StagingMoved from a merge's parent).
 */
export function refusalBehind(error: unknown): unknown {
  if (!isHostContention(error)) return null;
  const cause = (error as Error).cause;
  return cause !== undefined && !isTransientHostError(cause) ? cause : null;
}

/** Whether a host error is worth retrying: no answer at all, a 5xx, a time-out, a rate limit or a lost race. */
export function isTransientHostError(error: unknown): boolean {
  if (isHostContention(error)) return true;
  const status = (error as { status?: unknown } | null)?.status;
  // No HTTP status: the network, a time-out, the database. Nothing was decided.
  if (typeof status !== 'number') return true;
  if (status >= 500 || status === 429 || status === 408) return true;
  const message = error instanceof Error ? error.message : '';
  return status === 403 && /rate limit|abuse/i.test(message);
}
