import type { PullRequestFacts } from '../../domain/records.js';
import { repoKey, type RepoRef } from '../../domain/repo.js';
import type { GitHost, HostEvents, MergeOutcome, PullRequestStatusUpdate, TestRunRequest, TestRunStarted } from '../../ports/git-host.js';
import type { SandboxStore } from '../../ports/sandbox-store.js';
import { KeyedMutex } from '../../concurrency/keyed-mutex.js';
import {
  defaultPullRequest,
  emptyRepository,
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
export type PullRequestChange = Partial<Pick<SandboxPullRequest, 'title' | 'author' | 'body' | 'baseBranch' | 'open' | 'draft'>> &
  Partial<PrBehavior> & { push?: boolean };

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

  private async change<T>(repo: RepoRef, work: (state: SandboxRepositoryState, key: string) => T): Promise<T> {
    const key = repoKey(repo);
    return this.mutex.run(key, async () => {
      const json = await this.options.store.load(key);
      const state = json ? (JSON.parse(json) as SandboxRepositoryState) : emptyRepository();
      const result = work(state, key);
      await this.options.store.save(key, JSON.stringify(state));
      return result;
    });
  }

  private static pr(state: SandboxRepositoryState, key: string, prNumber: number): SandboxPullRequest {
    state.pullRequests[prNumber] ??= defaultPullRequest(key, prNumber);
    return state.pullRequests[prNumber];
  }

  private static head(state: SandboxRepositoryState, key: string, branch: string): string {
    state.branches[branch] ??= fakeSha(key, 'branch', branch, 'initial');
    return state.branches[branch];
  }

  async readPullRequest(repo: RepoRef, prNumber: number): Promise<PullRequestFacts> {
    const pr = await this.change(repo, (state, key) => ({ ...SandboxHost.pr(state, key, prNumber) }));
    return {
      title: pr.title,
      author: pr.author,
      headSha: pr.headSha,
      baseBranch: pr.baseBranch,
      open: pr.open,
      draft: pr.draft,
      merged: pr.merged,
      mergeability: pr.open && !pr.merged ? 'mergeable' : 'unspecified',
      url: `sandbox://${repo.owner}/${repo.name}/pull/${prNumber}`,
      body: pr.body,
      readAt: new Date(),
    };
  }

  readBranchHead(repo: RepoRef, branch: string): Promise<string> {
    return this.change(repo, (state, key) => SandboxHost.head(state, key, branch));
  }

  async startTestRun(request: TestRunRequest): Promise<TestRunStarted> {
    const testBranch = `mq/${request.targetBranch}/${request.runId}`;
    const prs = await this.change(request.repo, (state, key) => request.heads.map((h) => ({ ...SandboxHost.pr(state, key, h.prNumber) })));
    // A PR conflicting with one applied before it cannot be applied: like a failed merge on GitHub.
    const present = new Set<number>();
    for (const pr of prs) {
      if (pr.behavior.conflictsWith.some((n) => present.has(n))) return { ok: false, reason: 'merge_conflict', prNumber: pr.number };
      present.add(pr.number);
    }
    const testBranchSha = fakeSha(request.baseSha, ...request.heads.map((h) => `${h.prNumber}@${h.headSha}`));
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
    return this.change(request.repo, (state, key): MergeOutcome => {
      const current = SandboxHost.head(state, key, request.targetBranch);
      const prs = request.heads.map((h) => SandboxHost.pr(state, key, h.prNumber));
      const landed = fakeSha(request.expectedBaseSha, ...request.heads.map((h) => `${h.prNumber}@${h.headSha}`));
      // Asked again after it merged (a replica died before recording it): the same answer, no second merge.
      if (current === landed && prs.every((pr) => pr.merged)) return { ok: true, newBaseSha: landed };
      if (current !== request.expectedBaseSha) return { ok: false, reason: 'base_moved' };
      if (prs.some((pr) => !pr.open || pr.merged)) return { ok: false, reason: 'pr_closed' };
      if (prs.some((pr, i) => pr.headSha !== request.heads[i]?.headSha)) return { ok: false, reason: 'head_changed' };
      const newBaseSha = fakeSha(current, ...request.heads.map((h) => `${h.prNumber}@${h.headSha}`));
      state.branches[request.targetBranch] = newBaseSha;
      for (const pr of prs) Object.assign(pr, { open: false, merged: true });
      return { ok: true, newBaseSha };
    });
  }

  async reportPullRequestStatus(update: PullRequestStatusUpdate): Promise<void> {
    if (!update.statusCheckEnabled) return;
    await this.change(update.repo, (state, key) => {
      const pr = SandboxHost.pr(state, key, update.prNumber);
      pr.queueStatus = {
        state: update.state,
        reason: update.reason,
        ...(update.detail ? { detail: update.detail } : {}),
        ...(update.position ? { position: update.position } : {}),
      };
    });
  }

  /** Changes a simulated PR (a push gives it a new head) and tells the queue. */
  async updatePullRequest(repo: RepoRef, prNumber: number, change: PullRequestChange): Promise<SandboxPullRequest> {
    const pr = await this.change(repo, (state, key) => {
      const pr = SandboxHost.pr(state, key, prNumber);
      const { push, outcome, flakyRate, ciSeconds, conflictsWith, ...facts } = change;
      Object.assign(pr, facts);
      pr.behavior = {
        outcome: outcome ?? pr.behavior.outcome,
        flakyRate: flakyRate ?? pr.behavior.flakyRate,
        ciSeconds: ciSeconds ?? pr.behavior.ciSeconds,
        conflictsWith: conflictsWith ?? pr.behavior.conflictsWith,
      };
      if (push) pr.headSha = fakeSha(pr.headSha, 'push');
      return { ...pr };
    });
    await this.options.events().pullRequestChanged(repo, prNumber);
    return pr;
  }

  /** A push to a branch from outside the queue. */
  async pushToBranch(repo: RepoRef, branch: string): Promise<string> {
    const sha = await this.change(repo, (state, key) => {
      state.branches[branch] = fakeSha(SandboxHost.head(state, key, branch), 'outside push');
      return state.branches[branch];
    });
    await this.options.events().branchMoved(repo, branch, sha);
    return sha;
  }

  /** The simulated repository as JSON-able data (GET-style reads for the demo). */
  inspect(repo: RepoRef): Promise<SandboxRepositoryState> {
    return this.change(repo, (state) => structuredClone(state));
  }

  stop(): void {
    for (const job of this.jobs.values()) clearTimeout(job);
    this.jobs.clear();
  }
}
