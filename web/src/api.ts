import type { BoardRun, QueueBoard, QueueHealthView, QueueSummary } from '../../src/api/schemas/dashboard.js';
import type { PullRequestView } from '../../src/api/schemas/pull-request.js';
import type { QueueView } from '../../src/api/schemas/queue.js';
import type { TestingDetailsView } from '../../src/api/schemas/testing-details.js';

/** The types the pages show are the API's own (inferred from its zod schemas). */
export type { BoardRun, QueueBoard, QueueHealthView, QueueSummary, QueueView, PullRequestView, TestingDetailsView };

export interface Session {
  organization: { host: string; owner: string };
  csrfToken: string;
  expiresAt: string;
}

export interface RepoRef {
  host: string;
  owner: string;
  name: string;
}

/** An answer other than 2xx: the API's plain-text message, shown as it is. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = '';

/** Dispatched on the window when a call is answered 401: the session is over (main.tsx goes back to signing in). */
export const SESSION_ENDED = 'mq-session-ended';

/** `sentWith`: the session's CSRF token the call carried; a 401 ends only that session (not one signed in since). */
async function answer<T>(res: Response, sentWith = ''): Promise<T> {
  const text = await res.text();
  if (res.status === 401 && sentWith !== '' && sentWith === csrfToken) {
    csrfToken = '';
    dispatchEvent(new Event(SESSION_ENDED));
  }
  if (!res.ok) throw new ApiError(res.status, text || res.statusText);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The session behind the cookie, or null when signed out (the cookie itself is HttpOnly: never seen here). */
export async function currentSession(): Promise<Session | null> {
  const res = await fetch('/ui/session', { credentials: 'same-origin' });
  if (res.status === 401) return null;
  const session = await answer<Session>(res);
  csrfToken = session.csrfToken;
  return session;
}

export async function signIn(token: string): Promise<Session> {
  const res = await fetch('/ui/session', { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  const session = await answer<Session>(res);
  csrfToken = session.csrfToken;
  return session;
}

export async function signOut(): Promise<void> {
  await answer(await fetch('/ui/session', { method: 'DELETE', credentials: 'same-origin', headers: { 'x-csrf-token': csrfToken } }));
  csrfToken = '';
}

/** A call with the session: the same rights and checks as with a token, plus the CSRF header. */
async function post<T>(path: string, body: object): Promise<T> {
  const sentWith = csrfToken;
  const res = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', 'x-csrf-token': sentWith },
    body: JSON.stringify(body),
  });
  return answer<T>(res, sentWith);
}

export const v1 = <T>(endpoint: string, body: object) => post<T>(`/v1/${endpoint}`, body);
export const sandbox = <T>(endpoint: string, body: object) => post<T>(`/sandbox/${endpoint}`, body);

export const api = {
  listQueues: () => v1<{ queues: QueueSummary[] }>('listQueues', {}),
  queue: (repo: RepoRef, targetBranch: string) => v1<QueueView>('getQueue', { repo, targetBranch }),
  queueId: async (repo: RepoRef, targetBranch: string) => (await v1<QueueView>('getQueue', { repo, targetBranch })).id,
  /** Only the settings given (the settings page sends what it changed). */
  updateSettings: (repo: RepoRef, targetBranch: string, settings: Record<string, unknown>) => v1('updateQueue', { ...settings, repo, targetBranch }),
  board: (repo: RepoRef, targetBranch: string) => v1<QueueBoard>('getQueueBoard', { repo, targetBranch }),
  health: (repo: RepoRef, targetBranch: string, hours: number, bucketMinutes: number) => v1<QueueHealthView>('getQueueHealth', { repo, targetBranch, hours, bucketMinutes }),
  pullRequest: (repo: RepoRef, targetBranch: string, number: number) => v1<PullRequestView>('getSubmittedPullRequest', { repo, targetBranch, pr: { number }, includeTimeline: true }),
  testingDetails: (repo: RepoRef, targetBranch: string, number: number) => v1<TestingDetailsView>('getMergeQueueTestingDetails', { repo, targetBranch, pr: { number } }),
  setQueueState: (repo: RepoRef, targetBranch: string, state: 'RUNNING' | 'PAUSED' | 'DRAINING') => v1('updateQueue', { repo, targetBranch, state }),
  /** An update that changes nothing: a blocked landing is tried at once. */
  retryLanding: (repo: RepoRef, targetBranch: string) => v1('updateQueue', { repo, targetBranch }),
  cancel: (repo: RepoRef, targetBranch: string, number: number) => v1('cancelPullRequest', { repo, targetBranch, pr: { number } }),
  restart: (repo: RepoRef, targetBranch: string, number: number) => v1('restartTestsOnPullRequest', { repo, targetBranch, pr: { number } }),
  createDemo: () => sandbox<{ repo: RepoRef; targetBranch: string }>('createDemoQueue', {}),
};
