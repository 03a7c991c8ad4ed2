import type { PullRequestFacts } from '../../domain/records.js';
import { repoKey, type RepoRef } from '../../domain/repo.js';
import type { GitHost, HostEvents, MergeOutcome, PullRequestStatusUpdate, TestRunRequest, TestRunStarted } from '../../ports/git-host.js';
import type { SandboxStore } from '../../ports/sandbox-store.js';
import { KeyedMutex } from '../../concurrency/keyed-mutex.js';
import {
  defaultPullRequest,
  fakeSha,
  type PrBehavior,
  type SandboxPullRequest,
  type SandboxRepositoryState,
} from './sandbox-repository.js';

/** The host name that selects the sandbox: `repo.host: "sandbox"`. */
export const SANDBOX_HOST = 'sandbox';

export interface SandboxOptions {
  store: SandboxStore;
  /** Where CI results and changes are reported (the queue runner). */
  events: () => HostEvents;
  /** Chance source for flaky PRs (tests pass a fixed one). */
  random?: () => number;
  /** Scales every CI duration (tests use a small factor). */
  timeScale?: number;
  /** Where a result that could not be reported goes (the runner re-asks for lost runs on start). */
  onError?: (error: unknown) => void;
}

/** What a sandbox user may change about a PR (POST /sandbox/updatePullRequest). */
export type PullRequestChange = Partial<Pick<SandboxPullRequest, 'title' | 'author' | 'body' | 'baseBranch' | 'open' | 'draft' | 'changedFiles'>> &
  Partial<PrBehavior> & { push?: boolean; upToDate?: boolean };

/**
 * A GitHost over simulated repositories and CI, so the queue can be tried and
 * tested without GitHub: PRs exist on first use, CI takes `ciSeconds` and
 * fails as each PR's behaviour says, merges move the branch like GitHub would.
 */
export class SandboxHost implements GitHost {
  private readonly mutex = new KeyedMutex();
  private readonly jobs = new Map<string, NodeJS.Timeout>();
  /** Simulated repositories live in the service's database. */
  readonly answersLocally = true;

  constructor(private readonly options: SandboxOptions) {}

  /** A PR as stored, or as it exists before anyone changed it. */
  private async pr(key: string, prNumber: number): Promise<SandboxPullRequest> {
    return (await this.options.store.pullRequest(key, prNumber)) ?? defaultPullRequest(key, prNumber);
  }

  private async prs(key: string, prNumbers: number[]): Promise<SandboxPullRequest[]> {
    const stored = new Map((await this.options.store.pullRequests(key, prNumbers)).map((pr) => [pr.number, pr]));
    return prNumbers.map((n) => stored.get(n) ?? defaultPullRequest(key, n));
  }

  /** Changes one PR; changes of one PR are applied one at a time in this process. */
  private changePr<T>(key: string, prNumber: number, work: (pr: SandboxPullRequest) => T): Promise<T> {
    return this.mutex.run(`${key}#${prNumber}`, async () => {
      const pr = await this.pr(key, prNumber);
      const result = work(pr);
      await this.options.store.savePullRequest(key, pr);
      return result;
    });
  }

  private async head(key: string, branch: string): Promise<{ sha: string; stored: boolean }> {
    const sha = await this.options.store.branch(key, branch);
    return sha ? { sha, stored: true } : { sha: fakeSha(key, 'branch', branch, 'initial'), stored: false };
  }

  async readPullRequest(repo: RepoRef, prNumber: number): Promise<PullRequestFacts> {
    const pr = await this.pr(repoKey(repo), prNumber);
    return {
      title: pr.title,
      author: pr.author,
      headSha: pr.headSha,
      baseBranch: pr.baseBranch,
      open: pr.open,
      draft: pr.draft,
      merged: pr.merged,
      mergeability: pr.open && !pr.merged ? 'mergeable' : 'unspecified',
      ...(pr.changedFiles !== undefined ? { changedFiles: pr.changedFiles } : {}),
      url: `sandbox://${repo.owner}/${repo.name}/pull/${prNumber}`,
      body: pr.body,
      readAt: new Date(),
    };
  }

  async readBranchHead(repo: RepoRef, branch: string): Promise<string> {
    return (await this.head(repoKey(repo), branch)).sha;
  }

  async startTestRun(request: TestRunRequest): Promise<TestRunStarted> {
    const testBranch = `mq/${request.targetBranch}/${request.runId}`;
    const key = repoKey(request.repo);
    const prs = await this.prs(key, request.heads.map((h) => h.prNumber));
    // A PR conflicting with one applied before it cannot be applied: like a failed merge on GitHub.
    // Merged into this branch counts as applied: the base holds it.
    const others = [...new Set(prs.flatMap((pr) => pr.behavior.conflictsWith))];
    const merged = (await this.prs(key, others)).filter((pr) => pr.merged && pr.baseBranch === request.targetBranch);
    const present = new Set<number>(merged.map((pr) => pr.number));
    for (const pr of prs) {
      if (pr.behavior.conflictsWith.some((n) => present.has(n))) return { ok: false, reason: 'merge_conflict', prNumber: pr.number };
      present.add(pr.number);
    }
    const testBranchSha = fakeSha(request.baseSha, ...request.heads.map((h) => `${h.prNumber}@${h.headSha}`));
    const [only] = prs;
    // Direct merge: up to date with this very base, and its own CI (which passes) tested that content.
    if (request.direct && prs.length === 1 && only && only.upToDateWith === request.baseSha && only.behavior.outcome === 'pass') {
      const reason = `#${only.number} was up to date with ${request.targetBranch} (${request.baseSha.slice(0, 7)}) and its own sandbox-ci had passed there: no second CI run was spent.`;
      return { ok: true, testBranch, testBranchSha, withoutCi: { reason, checkRuns: [{ name: 'sandbox-ci', status: 'completed', conclusion: 'success' }] } };
    }
    if (this.jobs.has(request.runId)) return { ok: true, testBranch, testBranchSha }; // Asked twice: one job.
    const random = this.options.random ?? Math.random;
    const culprits = prs.filter((pr) => pr.behavior.outcome === 'fail' || (pr.behavior.outcome === 'flaky' && random() < pr.behavior.flakyRate));
    const seconds = Math.max(1, ...prs.map((pr) => pr.behavior.ciSeconds));
    const job = setTimeout(() => {
      this.jobs.delete(request.runId);
      const failedChecks = culprits.map((pr) => `sandbox-ci (#${pr.number})`);
      this.options
        .events()
        .testRunFinished({
          queueId: request.queueId,
          runId: request.runId,
          passed: culprits.length === 0,
          failedChecks,
          checkRuns: [{ name: 'sandbox-ci', status: 'completed', conclusion: culprits.length === 0 ? 'success' : 'failure' }],
        })
        .catch((error: unknown) => this.options.onError?.(error));
    }, seconds * 1000 * (this.options.timeScale ?? 1));
    job.unref();
    this.jobs.set(request.runId, job);
    return { ok: true, testBranch, testBranchSha };
  }

  async cancelTestRun(_repo: RepoRef, runId: string): Promise<void> {
    const job = this.jobs.get(runId);
    if (job) clearTimeout(job);
    this.jobs.delete(runId);
  }

  merge(request: Parameters<GitHost['merge']>[0]): Promise<MergeOutcome> {
    const key = repoKey(request.repo);
    return this.mutex.run(`${key}@${request.targetBranch}`, async (): Promise<MergeOutcome> => {
      const current = await this.head(key, request.targetBranch);
      const prs = await this.prs(key, request.heads.map((h) => h.prNumber));
      const landed = fakeSha(request.expectedBaseSha, ...request.heads.map((h) => `${h.prNumber}@${h.headSha}`));
      // Asked again after it merged (a replica died before recording it): the same answer, no second merge.
      if (current.sha === landed && prs.every((pr) => pr.merged)) return { ok: true, newBaseSha: landed };
      if (current.sha !== request.expectedBaseSha) return { ok: false, reason: 'base_moved' };
      if (prs.some((pr) => !pr.open || pr.merged)) return { ok: false, reason: 'pr_closed' };
      if (prs.some((pr, i) => pr.headSha !== request.heads[i]?.headSha)) return { ok: false, reason: 'head_changed' };
      // The branch moves only from where it was checked (another replica may have moved it meanwhile).
      if (!(await this.options.store.moveBranch(key, request.targetBranch, current.stored ? current.sha : null, landed))) return { ok: false, reason: 'base_moved' };
      for (const pr of prs) await this.changePr(key, pr.number, (stored) => Object.assign(stored, { open: false, merged: true }));
      return { ok: true, newBaseSha: landed };
    });
  }

  async reportPullRequestStatus(update: PullRequestStatusUpdate): Promise<void> {
    if (!update.statusCheckEnabled) return;
    const key = repoKey(update.repo);
    const status = {
      state: update.state,
      reason: update.reason,
      ...(update.detail ? { detail: update.detail } : {}),
      ...(update.position ? { position: update.position } : {}),
      ...(update.estimatedMergeAt ? { estimatedMergeAt: update.estimatedMergeAt.toISOString() } : {}),
    };
    // In turn with the PR's other changes in this process, which write the status they read back with it.
    await this.mutex.run(`${key}#${update.prNumber}`, () => this.options.store.setQueueStatus(key, update.prNumber, status));
  }

  /** Changes a simulated PR (a push gives it a new head) and tells the queue. */
  async updatePullRequest(repo: RepoRef, prNumber: number, change: PullRequestChange): Promise<SandboxPullRequest> {
    const key = repoKey(repo);
    // Up to date with the branch as it is now (a push to the PR or the branch later makes it stale again).
    const branchHead = change.upToDate ? (await this.head(key, change.baseBranch ?? (await this.pr(key, prNumber)).baseBranch)).sha : null;
    const pr = await this.changePr(key, prNumber, (pr) => {
      const { push, upToDate: _upToDate, outcome, flakyRate, ciSeconds, conflictsWith, ...facts } = change;
      Object.assign(pr, facts);
      pr.behavior = {
        outcome: outcome ?? pr.behavior.outcome,
        flakyRate: flakyRate ?? pr.behavior.flakyRate,
        ciSeconds: ciSeconds ?? pr.behavior.ciSeconds,
        conflictsWith: conflictsWith ?? pr.behavior.conflictsWith,
      };
      if (push) pr.headSha = fakeSha(pr.headSha, 'push');
      if (branchHead) pr.upToDateWith = branchHead;
      return { ...pr };
    });
    await this.options.events().pullRequestChanged(repo, prNumber);
    return pr;
  }

  /** A push to a branch from outside the queue. */
  async pushToBranch(repo: RepoRef, branch: string): Promise<string> {
    const key = repoKey(repo);
    const sha = await this.mutex.run(`${key}@${branch}`, async () => {
      for (;;) {
        const current = await this.head(key, branch);
        const next = fakeSha(current.sha, 'outside push');
        if (await this.options.store.moveBranch(key, branch, current.stored ? current.sha : null, next)) return next;
      }
    });
    await this.options.events().branchMoved(repo, branch, sha);
    return sha;
  }

  /** The simulated repository as JSON-able data (GET-style reads for the demo). */
  inspect(repo: RepoRef): Promise<SandboxRepositoryState> {
    return this.options.store.repository(repoKey(repo));
  }

  stop(): void {
    for (const job of this.jobs.values()) clearTimeout(job);
    this.jobs.clear();
  }
}
