import { generateKeyPairSync } from 'node:crypto';
import { Probot } from 'probot';
import { pino } from 'pino';
import { queueProbotOctokit } from '../../src/adapters/github/index.js';
import { DEFAULT_QUEUE_CONFIG, type QueueConfig } from '../../src/domain/queue-config.js';
import { githubApp, type GitHubAppDeps } from '../../src/github/github-app.js';
import { startFakeGitHub, type BuiltEvent, type FakeGitHub, type FakeRepo } from '../support/fake-github/index.js';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });

/** The App's handlers (Probot) against the fake GitHub, with a queue for acme/widgets and its submits and cancels recorded. */
export interface AppOnFake {
  fake: FakeGitHub;
  repo: FakeRepo;
  probot: Probot;
  /** `submit #n`, `cancel #n` and `restart #n for <request id>`, in the order the handlers called them. */
  calls: string[];
  /** The head each submit named. */
  submittedHeads: Array<string | undefined>;
  /** What each submit asked for besides the PR (priority, noBatch, head). */
  submits: Array<Record<string, unknown>>;
}

/** Probot builds its Octokits as production does (queueProbotOctokit: its retry plugin asks a failed request again), with short back-off and writes not spaced. */
/**
 * `testCommits`: shas that are a queue's test commits (checksChanged says so); `waiting`: NOT_READY PRs of the queue
 * and their heads (what `enqueued` answers). Check events then record `checks <sha>`, `enqueued read` and `changed #n`.
 */
export async function appOnFakeGitHub(
  options: Parameters<typeof startFakeGitHub>[0] & { config?: Partial<QueueConfig>; noStoredQueue?: boolean; cancelAnswer?: unknown; queued?: number[]; queuedAt?: Date; testCommits?: string[]; waiting?: Array<{ prNumber: number; headSha: string }> } = {},
): Promise<AppOnFake> {
  const fake = await startFakeGitHub(options);
  const repo = fake.createRepo('acme/widgets');
  const calls: string[] = [];
  const submittedHeads: Array<string | undefined> = [];
  const submits: Array<Record<string, unknown>> = [];
  const queue = { id: 'q1', repo: { host: 'github.com', owner: 'acme', name: 'widgets' }, targetBranch: 'main', config: { ...DEFAULT_QUEUE_CONFIG, ...options.config } };
  const deps = {
    // noStoredQueue: no queue is stored for the branch (one only the repository's file would create).
    stores: {
      queues: { find: async () => (options.noStoredQueue ? null : queue), listForOrg: async () => (options.noStoredQueue ? [] : [queue]) },
      // queued: the PRs the queue holds (TESTING, their attempt submitted at queuedAt, else long ago); no other PR has an entry.
      entries: { find: async (_queueId: string, prNumber: number) => (options.queued?.includes(prNumber) ? { prNumber, state: 'TESTING', submittedAt: options.queuedAt ?? new Date(0) } : null) },
    },
    // The queue follows its repository by id (renames): nothing to follow in these scenarios.
    queues: { followRepository: async () => undefined },
    pullRequests: {
      submit: async (ref: { prNumber: number; headSha?: string; repo?: unknown; targetBranch?: string }) => {
        calls.push(`submit #${ref.prNumber}`);
        submittedHeads.push(ref.headSha);
        const { repo: _repo, targetBranch: _branch, prNumber: _number, ...asked } = ref;
        submits.push(asked);
        return { ok: true, value: {} };
      },
      restart: async (ref: { prNumber: number }, requestId?: string) => (calls.push(`restart #${ref.prNumber} for ${String(requestId)}`), { ok: true, value: {} }),
      // cancelAnswer: what the queue answers a cancel (ok unless given).
      cancel: async (ref: { prNumber: number }) => (calls.push(`cancel #${ref.prNumber}`), options.cancelAnswer ?? { ok: true, value: {} }),
    },
    // A push only moves a branch for the runner; here, only its queue-file check matters.
    events: { branchMoved: async () => undefined, pullRequestChanged: async (_repo: unknown, n: number) => void calls.push(`changed #${n}`) },
    checksChanged: async (_repo: unknown, sha: string) => {
      calls.push(`checks ${sha.slice(0, 7)}`);
      return options.testCommits?.includes(sha) ?? false;
    },
    enqueued: async () => {
      calls.push('enqueued read');
      return (options.waiting ?? []).map((pr) => ({ prNumber: pr.prNumber, state: 'NOT_READY', facts: { headSha: pr.headSha } }));
    },
    hostName: 'github.com',
    appId: fake.app.id,
    rememberInstallation() {},
  } as unknown as GitHubAppDeps;
  const quiet = pino({ level: 'silent' });
  const probot = new Probot({ appId: fake.app.id, privateKey, secret: 'secret', baseUrl: fake.baseUrl, log: quiet, Octokit: queueProbotOctokit(quiet, { unitMs: 1, spaceWrites: false }) });
  await probot.load(githubApp(deps));
  return { fake, repo, probot, calls, submittedHeads, submits };
}

/** Hands the App the deliveries `act` made (of these events), taken out of the fake's outbox. */
export async function handled(app: { fake: FakeGitHub; probot: Probot }, events: string[], act: () => void): Promise<void> {
  app.fake.webhooks.drop();
  act();
  for (const event of app.fake.webhooks.drop().filter((e: BuiltEvent) => events.includes(e.event))) {
    await app.probot.receive({ id: `d${Math.random()}`, name: event.event, payload: event.payload } as Parameters<Probot['receive']>[0]);
  }
}
