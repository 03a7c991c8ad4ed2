import { KeyedMutex } from '../../concurrency/keyed-mutex.js';
import type { PullRequestFacts, TestRunRecord } from '../../domain/records.js';
import { repoKey, type RepoRef } from '../../domain/repo.js';
import type { GitHost, HostEvents, MergeOutcome, MergeRequest, PullRequestStatusUpdate, TestRunRequest, TestRunStarted } from '../../ports/git-host.js';
import type { QueueStore, TestRunStore } from '../../ports/stores.js';
import { decideChecks } from './check-outcome.js';
import { readCommitChecks } from './commit-checks.js';
import { wantsComment, type FeedbackContext } from './feedback-texts.js';
import { failedWith, getData, repoParams, type GitHubClient, type GitHubLog, type OctokitFor } from './github-client.js';
import type { PullRequestData } from './github-types.js';
import { landTestedCommit } from './land-tested-commit.js';
import { CheckRunIds, publishCheckRun, postEjectionComment } from './pull-request-feedback.js';
import { toPullRequestFacts } from './pull-request-facts.js';
import { blockedOnlyByPendingChecks } from './blocked-by-checks.js';
import { landingRefusal } from './branch-policy.js';
import { LandingPolicies } from './landing-policy.js';
import { noRequiredStatusesMessage, resolveRequiredStatuses, type RequiredStatuses } from './required-statuses.js';
import { BranchReadBehind, buildTestBranch, deleteTestBranch, openTestPullRequest, readBranch, testBranchName } from './test-branch.js';
import { directMergeVerdict, landDirectly } from './direct-merge.js';
import { AppNotInstalledError } from './installation-octokits.js';

/** The `repo.host` of repositories on github.com. */
export const GITHUB_HOST = 'github.com';

export interface GitHubHostOptions {
  /** The installation Octokit for a repository (see `installationOctokits`). */
  octokitFor: OctokitFor;
  /** Where CI results are reported (the queue runner's host events). */
  events: () => HostEvents;
  /** Check results arrive by commit sha: the run in progress at that sha is the one they decide. */
  testRuns: Pick<TestRunStore, 'findInProgressByTestBranchSha' | 'listInProgress' | 'findById'>;
  /**
   * A run record knows its queue, not its repository: the queue says which
   * repository a run's checks must come from, which test branch a merge was
   * tested on, and which label re-queues a PR.
   */
  queues: Pick<QueueStore, 'find' | 'findById'>;
  log: GitHubLog;
  now?: () => number;
  /** The `repo.host` this adapter serves (GitHub Enterprise: its host name); reconcile skips other hosts' runs. */
  hostName?: string;
  /** The App's slug (bypass lists name apps by it); null when it cannot be known, and bypass is then not predicted. */
  appSlug?: () => Promise<string | null>;
  /** How long a repository's merge settings and rulesets' bypass are taken as read (tests shorten it); see LandingPolicies. */
  settingsKeptMs?: number;
}

/** How soon a test commit whose checks were reported early is looked at again (the runner records it meanwhile). */
const EARLY_LOOK_MS = 1_000;

/** What one look at a test branch's checks concluded. */
export type ChecksOutcome = 'no_run' | 'waiting' | 'passed' | 'failed';

/**
 * The GitHost of repositories on GitHub, through Octokit: test branches built
 * with the Git API, results from check runs and commit statuses, merges by the
 * REST API, and the PR's queue state shown as a check run and comments.
 */
export class GitHubHost implements GitHost {
  private readonly now: () => number;
  private readonly hostName: string;
  /** Check webhooks come in bursts for one sha; one look at a time reports a run once. */
  private readonly checking = new KeyedMutex();
  private slug: string | null | undefined;
  private readonly checkRunIds = new CheckRunIds();
  /** Runs this process reported decided: later check events for their commit (a burst, the reconcile) are not looked at again. */
  private readonly reported = new Set<string>();
  /** Commits whose checks changed before any run was known to test them: a run just built may be one (see startTestRun). */
  private readonly unclaimed = new Set<string>();
  /** Merge settings and rulesets' bypass kept between runs; protection and rules between reads of blocked PRs. */
  private readonly policies: LandingPolicies;

  constructor(private readonly options: GitHubHostOptions) {
    this.now = options.now ?? Date.now;
    this.hostName = (options.hostName ?? GITHUB_HOST).toLowerCase();
    this.policies = new LandingPolicies(options.log, options.settingsKeptMs);
  }

  async readPullRequest(repo: RepoRef, prNumber: number): Promise<PullRequestFacts | null> {
    const client = await this.options.octokitFor(repo);
    try {
      const pr = await getData<PullRequestData>(client, 'GET /repos/{owner}/{repo}/pulls/{pull_number}', { ...repoParams(repo), pull_number: prNumber });
      const blocked = pr.state === 'open' && pr.mergeable === true && pr.mergeable_state === 'blocked';
      // Protection and rules as read within the last minute: every blocked PR read again (each check event naming it,
      // and the slow re-read of waiting PRs) would otherwise read them twice more.
      const policy = () => this.policies.reads(client, repo).branch(pr.base.ref);
      const checksPending = blocked && (await blockedOnlyByPendingChecks(client, repo, { number: prNumber, baseBranch: pr.base.ref, headSha: pr.head.sha }, { log: this.options.log, policy }));
      return toPullRequestFacts(pr, new Date(this.now()), checksPending);
    } catch (error) {
      if (!failedWith(error, 404)) throw error;
      // GitHub answers 404 for what the token may not see: a PR is never deleted, so a 404 on the repository too means
      // the App lost access to it (taken out of the installation), an outage that ends when access comes back, not a
      // closed PR (found by review: its PRs were cancelled as closed, and stayed out once access returned).
      if (await this.repositoryVisible(client, repo)) return null;
      throw new AppNotInstalledError(repo);
    }
  }

  /** Whether the App's token sees the repository (404 when it does not, as for one that does not exist). */
  private async repositoryVisible(client: GitHubClient, repo: RepoRef): Promise<boolean> {
    try {
      await client.request('GET /repos/{owner}/{repo}', repoParams(repo));
      return true;
    } catch (error) {
      if (failedWith(error, 404)) return false;
      throw error;
    }
  }

  async readBranchHead(repo: RepoRef, branch: string): Promise<string | null> {
    return readBranch(await this.options.octokitFor(repo), repo, branch);
  }

  async startTestRun(request: TestRunRequest): Promise<TestRunStarted> {
    const { repo, targetBranch, runId } = request;
    const client = await this.options.octokitFor(repo);
    // Before building anything: a run that cannot be decided, or could never land, is not worth a branch or CI.
    let judged = await this.judgeLanding(client, request, false);
    // The settings kept may predate a fix the operator just made: a run is refused only on a fresh reading.
    if ('refused' in judged && judged.fromKept) judged = await this.judgeLanding(client, request, true);
    if ('refused' in judged) return judged.refused;
    const { required } = judged;
    const [only] = request.heads;
    if (request.direct && only && request.heads.length === 1 && !request.buildOn) {
      const direct = await directMergeVerdict(client, repo, { branch: targetBranch, baseSha: request.baseSha }, only, required.statuses, required.apps);
      if (direct) {
        // Nothing to build: the PR's head is the tested commit, and it lands itself (see landDirectly).
        this.options.log.info({ repo: repoKey(repo), branch: targetBranch, runId, pr: only.prNumber, sha: only.headSha }, 'direct merge: no CI run needed');
        return { ok: true, testBranch: `refs/pull/${only.prNumber}/head`, testBranchSha: only.headSha, requiredStatuses: required.statuses, requiredStatusesSource: required.source, ...appsOf(required), withoutCi: direct };
      }
    }
    const branch = testBranchName(targetBranch, runId);
    let built;
    try {
      built = await buildTestBranch(client, repo, branch, request);
      if (built.ok && request.createPullRequest) await openTestPullRequest(client, repo, branch, targetBranch, runId, request.heads, this.options.log);
    } catch (error) {
      // The runner fails the run; a half-built branch must not outlive it. Not one GitHub says exists while its read
      // lags: that is this run's finished build, which the start asked again keeps (CI does not start over).
      if (!(error instanceof BranchReadBehind)) await this.deleteQuietly(repo, branch, request.createPullRequest ?? false);
      throw error;
    }
    // No test branch is made on a conflict or a refusal (it is created last): nothing to delete.
    if (!built.ok) {
      if ('unbuildable' in built) return { ok: false, reason: 'pr_unbuildable', prNumber: built.unbuildable.prNumber, message: built.unbuildable.message };
      if ('headChanged' in built) return { ok: false, reason: 'head_changed', prNumber: built.headChanged };
      return { ok: false, reason: 'merge_conflict', prNumber: built.conflictWith };
    }
    this.options.log.info({ repo: repoKey(repo), branch: targetBranch, runId, testBranch: branch, sha: built.sha, required: required.statuses }, 'test branch built');
    this.lookAgainIfEarly(repo, built.sha);
    return { ok: true, testBranch: branch, testBranchSha: built.sha, requiredStatuses: required.statuses, requiredStatusesSource: required.source, ...appsOf(required) };
  }

  async cancelTestRun(repo: RepoRef, runId: string): Promise<void> {
    // The port gives no target branch, and the test branch's name includes it: ask GitHub which mq/ branch is this run's.
    const client = await this.options.octokitFor(repo);
    const refs = await getData<Array<{ ref: string }>>(client, 'GET /repos/{owner}/{repo}/git/matching-refs/{ref}', { ...repoParams(repo), ref: 'heads/mq/' });
    for (const { ref } of refs) {
      if (ref.endsWith(`/${runId}`)) await deleteTestBranch(client, repo, ref.replace(/^refs\/heads\//, ''));
    }
  }

  async merge(request: MergeRequest): Promise<MergeOutcome> {
    const { repo, targetBranch, runId } = request;
    const client = await this.options.octokitFor(repo);
    const run = await this.testRun(repo, targetBranch, runId);
    // Its test branch went when its checks decided it (decideRunAt): the tested commit stays, and lands.
    const outcome = run?.landedWithoutCi ? await landDirectly(client, request, this.options.log) : await landTestedCommit(client, request, run?.testBranchSha ?? null, this.options.log);
    // GitHub refused for a reason no PR caused, which the kept settings did not predict: the next run reads them afresh.
    if (!outcome.ok && outcome.reason === 'blocked') this.policies.forget(repo);
    return outcome;
  }

  async reportPullRequestStatus(update: PullRequestStatusUpdate): Promise<void> {
    const comment = wantsComment(update);
    // Merged with something to say (pushed to while it landed): squash and rebase landings said it on the PR already
    // (land-tested-commit.ts); a merge commit's did not, and GitHub leaves such a PR open.
    const mayTell = update.state === 'MERGED' && update.detail !== undefined && update.commentsEnabled;
    if (!update.statusCheckEnabled && !comment && !mayTell) return;
    const client = await this.options.octokitFor(update.repo);
    const context = await this.feedbackContext(update);
    if (update.statusCheckEnabled) await publishCheckRun(client, update, context, new Date(this.now()), this.checkRunIds);
    if (comment || (mayTell && context.mergeMethod === 'merge_commit')) await postEjectionComment(client, update, context);
  }

  /**
   * Looks at a commit's checks and, when they decide the test run built at
   * that commit, reports it and deletes the test branch. Webhook handlers call
   * it for check_run, check_suite and status events; `reconcile` for every run
   * in progress. Most commits are not test branches: that is `no_run`.
   */
  onCommitChecksChanged(repo: RepoRef, sha: string): Promise<ChecksOutcome> {
    return this.checking.run(sha, () => this.decideRunAt(repo, sha));
  }

  /** Catches results whose webhooks were lost: the service calls it periodically. */
  async reconcile(): Promise<void> {
    for (const run of await this.options.testRuns.listInProgress()) {
      if (!run.testBranchSha) continue; // Still being built.
      try {
        const queue = await this.options.queues.findById(run.queueId);
        if (!queue || queue.repo.host.toLowerCase() !== this.hostName) continue;
        await this.onCommitChecksChanged(queue.repo, run.testBranchSha);
      } catch (error) {
        this.options.log.warn({ err: error, queueId: run.queueId, runId: run.id }, 'could not reconcile the checks of a test run');
      }
    }
  }

  private async decideRunAt(repo: RepoRef, sha: string): Promise<ChecksOutcome> {
    const { testRuns, queues, log } = this.options;
    const run = await testRuns.findInProgressByTestBranchSha(sha);
    // A direct merge's verdict came with it (the PR's own checks): its head's check events are not a run's results.
    if (run?.landedWithoutCi) return 'no_run';
    if (!run) {
      this.unclaimed.add(sha);
      if (this.unclaimed.size > 1_000) this.unclaimed.delete(this.unclaimed.values().next().value as string);
      return 'no_run';
    }
    // Reported already, and its record not yet updated by the runner: nothing to read again.
    if (this.reported.has(run.id)) return 'waiting';
    const queue = await queues.findById(run.queueId);
    // Only the queue's own repository decides: a fork can carry the same sha with statuses of its own making.
    if (!queue || repoKey(queue.repo) !== repoKey(repo)) {
      log.warn({ repo: repoKey(repo), sha, runId: run.id }, 'checks reported for a test branch sha from another repository; ignored');
      return 'no_run';
    }
    const where = { repo: repoKey(repo), branch: queue.targetBranch, runId: run.id, sha };
    if (run.requiredStatuses.length === 0) {
      // Recorded right after the branch is built; until then nothing can pass.
      log.warn(where, 'test run has no required statuses recorded yet; waiting');
      return 'waiting';
    }
    const client = await this.options.octokitFor(repo);
    const { checkRuns, statuses } = await readCommitChecks(client, repo, sha, run.requiredStatuses, run.requiredCheckApps);
    const decided = decideChecks(run.requiredStatuses, checkRuns, statuses);
    if (decided.verdict === 'waiting') return 'waiting';
    const passed = decided.verdict === 'passed';
    const failedChecks = decided.verdict === 'failed' ? decided.failedChecks : [];
    await this.options.events().testRunFinished({ queueId: run.queueId, runId: run.id, passed, checkRuns: decided.checkRuns, failedChecks });
    if (this.reported.size > 10_000) this.reported.clear();
    this.reported.add(run.id);
    log.info({ ...where, passed, failedChecks }, 'test run finished');
    await this.deleteQuietly(repo, run.testBranch, queue.config.createPrsForTestingBranches);
    return decided.verdict;
  }

  /** What the branch's policy says of a run: the checks that decide it, or why it is refused before anything is built. */
  private async judgeLanding(client: GitHubClient, request: TestRunRequest, fresh: boolean): Promise<{ required: RequiredStatuses } | { refused: TestRunStarted; fromKept: boolean }> {
    const { repo, targetBranch } = request;
    const reads = this.policies.reads(client, repo, { fresh });
    // Read for every run: the checks that decide it come from them (see BRANCH_KEPT_MS).
    const policy = await reads.branchNow(targetBranch);
    const required = resolveRequiredStatuses(targetBranch, request.requiredStatuses, policy);
    if (!required) return { refused: { ok: false, reason: 'no_required_statuses', message: noRequiredStatusesMessage(targetBranch) }, fromKept: reads.fromKept() };
    const refusal = await landingRefusal(reads, targetBranch, request.mergeMethod, policy, await this.appSlug());
    if (refusal) return { refused: { ok: false, reason: 'cannot_land', message: refusal }, fromKept: reads.fromKept() };
    return { required };
  }

  /** The run's record: the commit it tested, and whether it lands without CI (a direct merge). */
  private async testRun(repo: RepoRef, targetBranch: string, runId: string): Promise<TestRunRecord | null> {
    const queue = await this.options.queues.find(repo, targetBranch);
    return queue ? this.options.testRuns.findById(queue.id, runId) : null;
  }

  private async feedbackContext(update: PullRequestStatusUpdate): Promise<FeedbackContext> {
    const queue = await this.options.queues.find(update.repo, update.targetBranch);
    const known = { label: queue?.config.enqueueingLabel ?? 'merge-queue', ...(queue ? { mergeMethod: queue.config.mergeMethod } : {}) };
    const failed = update.testRun?.failedChecks ?? [];
    if (update.reason === 'timed_out' && queue && update.testRun) return { ...known, failingChecks: [], silentChecks: await this.silentChecks(update.repo, queue.id, update.testRun.runId) };
    if (failed.length === 0 || !queue || !update.testRun) return { ...known, failingChecks: failed.map((name) => ({ name })) };
    const run = await this.options.testRuns.findById(queue.id, update.testRun.runId);
    const urls = new Map((run?.checkRuns ?? []).map((check) => [check.name, check.url]));
    return { ...known, failingChecks: failed.map((name) => ({ name, ...(urls.get(name) ? { url: urls.get(name) } : {}) })) };
  }

  /** The run's required checks that never reported at its tested commit (a time-out's usual cause: CI does not run on mq/). */
  private async silentChecks(repo: RepoRef, queueId: string, runId: string): Promise<string[]> {
    const run = await this.options.testRuns.findById(queueId, runId);
    if (!run?.testBranchSha) return [];
    const { checkRuns, statuses } = await readCommitChecks(await this.options.octokitFor(repo), repo, run.testBranchSha, undefined, run.requiredCheckApps);
    const reported = new Set([...checkRuns.map((c) => c.name), ...statuses.map((s) => s.context)]);
    return run.requiredStatuses.filter((name) => !reported.has(name));
  }

  /**
   * CI can report on a test commit before the runner has recorded it (a check
   * that completes at once): that report found no run. Such a commit is looked
   * at again shortly, once; no request is spent on commits nobody reported on.
   */
  private lookAgainIfEarly(repo: RepoRef, sha: string): void {
    const look = () => {
      if (!this.unclaimed.delete(sha)) return;
      this.onCommitChecksChanged(repo, sha).catch((error: unknown) => this.options.log.warn({ err: error, repo: repoKey(repo), sha }, 'could not look at the checks of a new test branch'));
    };
    // Now (reported during the build), and after the runner has recorded the commit (reported just after it).
    setTimeout(look, EARLY_LOOK_MS).unref();
    setTimeout(look, EARLY_LOOK_MS * 5).unref();
  }

  /** Asked once; a failure is asked again next time (it only disables a prediction). */
  private async appSlug(): Promise<string | null> {
    if (this.slug !== undefined) return this.slug;
    try {
      this.slug = (await this.options.appSlug?.()) ?? null;
      return this.slug;
    } catch (error) {
      this.options.log.warn({ err: error }, 'could not read the App\'s slug; bypass lists are not checked before testing');
      return null;
    }
  }

  /** Ending a run must not fail because its branch could not be cleaned up: log it and go on. */
  private async deleteQuietly(repo: RepoRef, branch: string, closeDraftPullRequest = true): Promise<void> {
    try {
      await deleteTestBranch(await this.options.octokitFor(repo), repo, branch, { closeDraftPullRequest });
    } catch (error) {
      this.options.log.warn({ err: error, repo: repoKey(repo), branch }, 'could not delete a test branch');
    }
  }
}

function appsOf(required: RequiredStatuses): { requiredCheckApps?: RequiredStatuses['apps'] } {
  return required.apps.length > 0 ? { requiredCheckApps: required.apps } : {};
}
