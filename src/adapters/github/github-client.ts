import { setTimeout as sleep } from 'node:timers/promises';
import type { RepoRef } from '../../domain/repo.js';
import { isTransientHostError } from '../../ports/host-errors.js';

/**
 * The one Octokit method this adapter calls. Any Octokit fits (plain
 * @octokit/rest, Probot's installation Octokit, one with retry and throttling
 * plugins), and no Octokit type has to leave src/adapters/github/: the wiring
 * hands over whatever Octokit it has and this shape is all the host relies on.
 */
export interface GitHubClient {
  request(route: string, parameters?: Record<string, unknown>): Promise<{ status: number; data: unknown }>;
}

/**
 * For a write that is not safe to repeat blind (a comment, a check run: each POST makes a new one): no retry by the
 * client's retry plugin on a 5xx, which GitHub may give after the write went through (found on the fake GitHub: the
 * Landed and ejection comments posted twice). makeOnce asks it again instead, after looking for what it made.
 */
export const NOT_REPEATED_BLIND = { request: { retries: 0 } } as const;

/** Attempts of makeOnce, as many as the client's retry plugin makes of other requests. */
const MAKE_ATTEMPTS = 4;
const MAKE_RETRY_MS = 1_000;

/**
 * A write that makes something new each time (sent with NOT_REPEATED_BLIND), asked again after a transient failure
 * as the client would ask any other request, but only once `find` says the failed attempt made nothing: what it
 * made, found, is the answer. Still failing after the attempts, the failure goes up to the runner (an outage), whose
 * retry of the whole action looks again. Found by review: without this, one 5xx on a comment was an outage at once.
 */
export async function makeOnce<T>(make: () => Promise<T>, find: () => Promise<T | null>, retryMs = MAKE_RETRY_MS): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await make();
    } catch (error) {
      if (attempt >= MAKE_ATTEMPTS || !isTransientHostError(error)) throw error;
      await sleep(retryMs * attempt ** 2);
      const found = await find();
      if (found !== null) return found;
    }
  }
}

/**
 * makeOnce for a write an earlier attempt may already have made (a delivery or an action handled again after a
 * failure): looked for first, so that what was made is the answer without a POST.
 */
export async function makeOnceLookingFirst<T>(make: () => Promise<T>, find: () => Promise<T | null>, retryMs = MAKE_RETRY_MS): Promise<T> {
  return (await find()) ?? makeOnce(make, find, retryMs);
}

/** GitHub's `since` as its documentation writes it (YYYY-MM-DDTHH:MM:SSZ), whole seconds (rounded down). */
export function sinceParameter(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The client for one repository: installation tokens differ per installation. */
export type OctokitFor = (repo: RepoRef) => Promise<GitHubClient>;

/** What the adapter logs through (a pino logger fits). */
export interface GitHubLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** GitHub's `owner` and `repo` route parameters for a repository. */
export function repoParams(repo: RepoRef): { owner: string; repo: string } {
  return { owner: repo.owner, repo: repo.name };
}

/** The HTTP status of a failed Octokit request (a RequestError), if it is one. */
export function httpStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('status' in error)) return undefined;
  return typeof error.status === 'number' ? error.status : undefined;
}

/** Whether a request failed with one of these statuses: the expected "no" answers GitHub gives. */
export function failedWith(error: unknown, ...statuses: number[]): boolean {
  const status = httpStatus(error);
  return status !== undefined && statuses.includes(status);
}

/** GitHub's own words for a refusal (its JSON `message`), else the error's. */
export function messageOf(error: unknown): string {
  const data = (error as { response?: { data?: { message?: unknown } } }).response?.data;
  if (typeof data?.message === 'string') return data.message;
  return error instanceof Error ? error.message : String(error);
}

/** A typed GET; the type is what GitHub documents for the route (see github-types.ts). */
export async function getData<T>(client: GitHubClient, route: string, parameters: Record<string, unknown>): Promise<T> {
  return (await client.request(route, parameters)).data as T;
}

/** Per-page size for lists: GitHub's maximum, so long lists take few requests. */
export const PAGE_SIZE = 100;

/**
 * Reads every page of a list. Octokit's paginate plugin would do it, but it is
 * not part of the one-method client above, and GitHub lists wrap their items
 * differently (`check_runs`, `statuses`, bare arrays), so `items` picks them.
 */
export async function readAllPages<T>(
  client: GitHubClient,
  route: string,
  parameters: Record<string, unknown>,
  items: (data: unknown) => T[],
): Promise<T[]> {
  const all: T[] = [];
  for (let page = 1; ; page++) {
    const batch = items((await client.request(route, { ...parameters, per_page: PAGE_SIZE, page })).data);
    all.push(...batch);
    if (batch.length < PAGE_SIZE) return all;
  }
}
