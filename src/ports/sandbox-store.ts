import type { SandboxPullRequest, SandboxRepositoryState } from '../adapters/sandbox/sandbox-repository.js';

/**
 * Where the sandbox host keeps its simulated repositories: one document per
 * pull request and per branch, so a call costs the same with 10 or 10,000 PRs.
 */
export interface SandboxStore {
  pullRequest(repoKey: string, prNumber: number): Promise<SandboxPullRequest | null>;
  /** Those of these PRs that were ever changed (one query). */
  pullRequests(repoKey: string, prNumbers: number[]): Promise<SandboxPullRequest[]>;
  savePullRequest(repoKey: string, pr: SandboxPullRequest): Promise<void>;
  /** Shows the queue's status on a PR, stored or not yet (one write, no read: the queue shows every status change). */
  setQueueStatus(repoKey: string, prNumber: number, status: NonNullable<SandboxPullRequest['queueStatus']>): Promise<void>;
  branch(repoKey: string, name: string): Promise<string | null>;
  /** Moves a branch that is at `from` (null: not stored yet) to `to`; false when it was elsewhere. */
  moveBranch(repoKey: string, name: string, from: string | null, to: string): Promise<boolean>;
  /** The whole simulated repository (the inspect endpoint). */
  repository(repoKey: string): Promise<SandboxRepositoryState>;
}
