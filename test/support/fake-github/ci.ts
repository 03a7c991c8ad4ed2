import type { FakeGitHub } from './index.js';
import type { CheckRun, CommitStatus, Sha } from './model.js';

/** CI for tests: check runs as GitHub Actions, commit statuses as a CI user. */

export type CheckConclusion = 'success' | 'failure' | 'neutral' | 'cancelled' | 'skipped' | 'timed_out' | 'action_required';

export interface AutoRunOptions {
  /** Branches whose pushes CI runs on (a test branch, say `/^mq\//`). */
  branches: RegExp;
  /** Check run names to report. */
  checks: string[];
  /** The result per check; `null` leaves the run in progress (for a test to finish by hand). */
  conclusion?: (run: { sha: Sha; branch: string; check: string; pullRequests: number[] }) => CheckConclusion | null;
  /** Delay before results arrive (default 0: next macrotask, never inside the API call). */
  delayMs?: number;
}

/** "CI": check runs from the GitHub Actions app and commit statuses from a CI user. */
export class FakeCi {
  private timers = new Set<NodeJS.Timeout>();
  private stops: Array<() => void> = [];

  constructor(private readonly fake: FakeGitHub) {}

  /**
   * Runs CI by itself on every push to matching branches: each check starts at once
   * and completes after `delayMs` with `conclusion(...)` (default success). Returns a
   * function that stops it; `fake.close()` stops all.
   */
  autoRun(options: AutoRunOptions): () => void {
    const stop = this.fake.state.onEvent((e) => {
      if (e.name !== 'push' || e.deleted || !e.ref.startsWith('refs/heads/')) return;
      const branch = e.ref.slice('refs/heads/'.length);
      if (!options.branches.test(branch)) return;
      const sha = e.after;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        try {
          for (const check of options.checks) {
            const conclusion = options.conclusion ? options.conclusion({ sha, branch, check, pullRequests: this.fake.pullRequestsIn(sha) }) : 'success';
            if (conclusion === null) this.start(sha, check);
            else this.complete(sha, check, conclusion);
          }
        } catch (error) {
          // Thrown from a timer it would crash the test process: report it instead.
          this.fake.violations.push({ kind: 'response', method: '', path: '', message: `ci.autoRun failed on ${branch}: ${error instanceof Error ? error.message : String(error)}` });
        }
      }, options.delayMs ?? 0);
      this.timers.add(timer);
    });
    this.stops.push(stop);
    return stop;
  }

  /** Stops every `autoRun` and drops results not yet reported. */
  stop(): void {
    for (const stop of this.stops.splice(0)) stop();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** Marks a check run in progress (created when absent). */
  start(sha: Sha, name: string, options: { detailsUrl?: string } = {}): number {
    const { state } = this.fake;
    const repo = state.repoOfSha(sha);
    const existing = this.openRun(sha, name);
    if (existing) return existing.id;
    return state.createCheckRun(repo, this.fake.ciApp.id, { name, headSha: sha, status: 'in_progress', detailsUrl: options.detailsUrl }, this.fake.ciApp.botLogin).id;
  }

  /** Completes the check run `name` on `sha` (starting one first when none is open). */
  complete(sha: Sha, name: string, conclusion: CheckConclusion = 'success', options: { detailsUrl?: string; summary?: string } = {}): number {
    const { state } = this.fake;
    const run = this.openRun(sha, name) ?? state.checkRuns.get(this.start(sha, name, options))!;
    state.updateCheckRun(run, { conclusion, output: { title: `${name}: ${conclusion}`, summary: options.summary ?? conclusion, text: null } }, this.fake.ciApp.botLogin);
    return run.id;
  }

  /** A check run `name` on `sha` created already completed (one `created` event, as CIs that report only results do). */
  report(sha: Sha, name: string, conclusion: CheckConclusion = 'success'): number {
    const { state } = this.fake;
    return state.createCheckRun(state.repoOfSha(sha), this.fake.ciApp.id, { name, headSha: sha, conclusion, output: { title: `${name}: ${conclusion}`, summary: conclusion, text: null } }, this.fake.ciApp.botLogin).id;
  }

  /** A commit status from user `ci-bot` (or `creator`). */
  status(sha: Sha, context: string, stateValue: CommitStatus['state'], options: { description?: string; targetUrl?: string; creator?: string } = {}): number {
    const { state } = this.fake;
    return state.createStatus(state.repoOfSha(sha), sha, { state: stateValue, context, description: options.description ?? null, targetUrl: options.targetUrl ?? null }, options.creator ?? 'ci-bot').id;
  }

  private openRun(sha: Sha, name: string): CheckRun | undefined {
    const repo = this.fake.state.repoOfSha(sha);
    return this.fake.state.checkRunsOn(repo, sha).find((r) => r.name === name && r.appId === this.fake.ciApp.id && r.status !== 'completed');
  }
}

