import type { PullRequestState } from '../domain/pull-request-state.js';
import type { QueueEntryRecord } from '../domain/records.js';
import type { RepoRef } from '../domain/repo.js';
import type { Stores } from '../ports/stores.js';
import { findQueue } from './queue-service.js';
import { invalid, succeed, type Outcome } from './outcome.js';
import type { QueueRecord } from '../domain/records.js';

export const DEFAULT_PAGE_SIZE = 50;

/** The cursor is opaque to clients: where the previous page ended, newest first. */
export function encodeCursor(entry: QueueEntryRecord): string {
  return Buffer.from(JSON.stringify({ t: entry.submittedAt.getTime(), id: entry.id })).toString('base64url');
}

export function decodeCursor(cursor: string): { submittedAt: Date; id: string } | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return null;
    const { t, id } = parsed as { t?: unknown; id?: unknown };
    if (typeof t !== 'number' || !Number.isFinite(t) || typeof id !== 'string' || !/^[0-9a-f]{24}$/.test(id)) return null;
    const submittedAt = new Date(t);
    // A finite number can still be outside the Date range (an Invalid Date the database cannot cast).
    if (Number.isNaN(submittedAt.getTime())) return null;
    return { submittedAt, id };
  } catch {
    return null;
  }
}

export interface ListQuery {
  repo: RepoRef;
  targetBranch: string;
  states?: PullRequestState[];
  since?: Date;
  until?: Date;
  take?: number;
  cursor?: string;
}

/** One page of a queue's pull requests (every attempt's latest state), newest first. */
export async function listPullRequests(
  stores: Stores,
  query: ListQuery,
): Promise<Outcome<{ queue: QueueRecord; entries: QueueEntryRecord[]; nextCursor?: string }>> {
  const queue = await findQueue(stores, query.repo, query.targetBranch);
  if (!queue.ok) return queue;
  if (query.since && query.until && query.since > query.until) return invalid('since must not be later than until.');
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  if (after === null) return invalid('cursor is not one this service returned; start again without it.');
  const take = query.take ?? DEFAULT_PAGE_SIZE;
  // One extra row tells whether another page follows.
  const rows = await stores.entries.page({
    queueId: queue.value.id,
    states: query.states,
    since: query.since,
    until: query.until,
    take: take + 1,
    after,
  });
  const entries = rows.slice(0, take);
  const last = entries[entries.length - 1];
  return succeed({
    queue: queue.value,
    entries,
    ...(rows.length > take && last ? { nextCursor: encodeCursor(last) } : {}),
  });
}
