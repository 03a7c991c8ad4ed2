/**
 * Shared pieces of the GitHub adapter's nock tests: GitHub JSON derived from
 * real webhook payloads (@octokit/webhooks-examples), a plain Octokit, a log
 * that remembers, and in-memory stand-ins for the stores the host reads.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Octokit } from '@octokit/rest';
import nock from 'nock';
import { DEFAULT_QUEUE_CONFIG, type QueueConfig } from '../../src/domain/queue-config.js';
import type { QueueRecord, TestRunRecord } from '../../src/domain/records.js';
import { repoKey, type RepoRef } from '../../src/domain/repo.js';
import type { CheckResult, HostEvents } from '../../src/ports/git-host.js';
import { GitHubHost, type GitHubClient, type GitHubLog } from '../../src/adapters/github/index.js';

type Json = Record<string, unknown>;
type Examples = Array<{ name: string; examples: Json[] }>;
let examples: Examples | undefined;

/** A copy of a real webhook payload. */
export function webhookExample(event: string, action?: string): Json {
  examples ??= JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@octokit/webhooks-examples'), 'utf8')) as Examples;
  const found = examples.find((e) => e.name === event)?.examples.find((p) => action === undefined || p.action === action);
  if (!found) throw new Error(`no ${event}.${action ?? ''} example`);
  return structuredClone(found);
}

/** The repository of the webhook examples. */
export const REPO: RepoRef = { host: 'github.com', owner: 'Codertocat', name: 'Hello-World' };
export const API = 'https://api.github.com';
export const REPO_PATH = '/repos/Codertocat/Hello-World';

/** GET /pulls/{n}'s JSON: the pull_request of the `pull_request.opened` example, changed as given. */
export function pullRequestJson(change: { number?: number; headSha?: string; base?: string; body?: string | null } & Json = {}): Json {
  const pr = webhookExample('pull_request', 'opened').pull_request as Json & { head: Json; base: Json };
  const { number, headSha, base, ...rest } = change;
  if (number !== undefined) pr.number = number;
  if (headSha !== undefined) pr.head.sha = headSha;
  if (base !== undefined) pr.base.ref = base;
  return { ...pr, ...rest };
}

/** A check run as GET commits/{sha}/check-runs lists it: the `check_run.completed` example's, changed as given. */
export function checkRunJson(change: Json & { name: string }): Json {
  const run = webhookExample('check_run', 'completed').check_run as Json;
  return { ...run, ...change };
}

/** A commit status as the combined status lists it: from the `status` example. */
export function commitStatusJson(change: Json & { context: string; state: string }): Json {
  const { id, url, target_url, description, created_at, updated_at } = webhookExample('status');
  return { id, url: url ?? `${API}${REPO_PATH}/statuses/x`, target_url, description, created_at, updated_at, avatar_url: null, node_id: 'S', ...change };
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** The client every adapter test uses: plain Octokit, no retries, no throttling; its request log kept quiet (404s are expected). */
export function testOctokit(): GitHubClient {
  return new Octokit({ auth: 'test-token', baseUrl: API, request: { retries: 0 }, log: quiet });
}

export interface LogEntry {
  level: 'info' | 'warn' | 'error';
  details: object;
  message: string;
}

export function recordingLog(): GitHubLog & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at = (level: LogEntry['level']) => (details: object, message: string) => void entries.push({ level, details, message });
  return { entries, info: at('info'), warn: at('warn'), error: at('error') };
}

export function queueRecord(change: Omit<Partial<QueueRecord>, 'config'> & { config?: Partial<QueueConfig> } = {}): QueueRecord {
  const { config, ...rest } = change;
  return {
    id: 'q1',
    repo: REPO,
    targetBranch: 'main',
    config: { ...DEFAULT_QUEUE_CONFIG, ...config },
    requestedState: 'RUNNING',
    modeSwitchStartedAt: null,
    createdAt: new Date(0),
    updatedAt: new Date(0),
    ...rest,
  };
}

export function testRunRecord(change: Partial<TestRunRecord> = {}): TestRunRecord {
  return {
    id: 'run1',
    queueId: 'q1',
    engineRunId: 'e1',
    status: 'in_progress',
    baseSha: 'base0',
    testBranch: 'mq/main/run1',
    testBranchSha: 'test1',
    testedPullRequests: [{ entryId: 'x', prNumber: 2, headSha: 'head2' }],
    dependentPullRequests: [],
    isBisection: false,
    requiredStatuses: ['ci/build'],
    requiredStatusesSource: 'branch_protection',
    checkRuns: [],
    statusChecks: [],
    failureStatuses: [],
    impactedTargets: null,
    createdAt: new Date(0),
    finishedAt: null,
    ...change,
  };
}

export type FinishedReport = { queueId: string; runId: string; passed: boolean; checkRuns: CheckResult[]; failedChecks: string[] };

/** A GitHubHost over the test Octokit and in-memory queues and runs; `finished` collects reported results. */
export function testHost(setup: { queues?: QueueRecord[]; runs?: TestRunRecord[]; client?: GitHubClient; appSlug?: string; settingsKeptMs?: number } = {}) {
  const queues = setup.queues ?? [queueRecord()];
  const runs = setup.runs ?? [];
  const finished: FinishedReport[] = [];
  const log = recordingLog();
  const events: HostEvents = {
    async testRunFinished(report) {
      finished.push(report);
      const run = runs.find((r) => r.id === report.runId);
      if (run) run.status = report.passed ? 'succeeded' : 'failed';
    },
    async pullRequestChanged() {},
    async branchMoved() {},
    async hostAccess() {},
  };
  const client = setup.client ?? testOctokit();
  const host = new GitHubHost({
    octokitFor: async () => client,
    events: () => events,
    testRuns: {
      findInProgressByTestBranchSha: async (sha) => runs.find((r) => r.status === 'in_progress' && r.testBranchSha === sha) ?? null,
      listInProgress: async () => runs.filter((r) => r.status === 'in_progress'),
      findById: async (queueId, id) => runs.find((r) => r.queueId === queueId && r.id === id) ?? null,
    },
    queues: {
      find: async (repo, branch) => queues.find((q) => repoKey(q.repo) === repoKey(repo) && q.targetBranch === branch) ?? null,
      findById: async (id) => queues.find((q) => q.id === id) ?? null,
    },
    log,
    ...(setup.appSlug ? { appSlug: async () => setup.appSlug as string } : {}),
    ...(setup.settingsKeptMs !== undefined ? { settingsKeptMs: setup.settingsKeptMs } : {}),
    now: () => Date.parse('2024-05-01T12:00:00Z'),
  });
  return { host, finished, log, runs, queues };
}

// nock wraps node:http and fetch for the whole process when it is imported, and Jest imports a fresh nock for each
// test file a worker runs: unless each file's interceptors are taken off after it, they stay stacked under the real
// connections of the files that run after it in that worker (a node:http client's destroy() then did not reach its
// server in test/dashboard/live-stream.test.ts: it failed whenever enough of these files ran before it).
afterAll(() => nock.restore());

/** Every test starts with no interceptors and no way out to the network. */
export function useNock(): void {
  beforeAll(() => nock.disableNetConnect());
  afterEach(() => {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    expect(pending).toEqual([]);
  });
  afterAll(() => nock.enableNetConnect());
}

/** The requests nock saw, in order, as "METHOD path" lines (a scope's `on('request')` feeds it). */
export function requestLog(scope: nock.Scope): string[] {
  const seen: string[] = [];
  scope.on('request', (req: { method: string; path: string }) => seen.push(`${req.method} ${decodeURIComponent(req.path)}`));
  return seen;
}
