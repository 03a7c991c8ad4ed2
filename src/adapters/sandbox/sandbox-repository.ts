import { createHash } from 'node:crypto';

/**
 * A simulated repository: branches, pull requests and how each PR behaves in
 * CI. Plain data, persisted (a document per PR and per branch) so a sandbox
 * survives restarts.
 */
export interface PrBehavior {
  /** pass: CI passes with it; fail: any run containing it fails; flaky: fails with flakyRate. */
  outcome: 'pass' | 'fail' | 'flaky';
  flakyRate: number;
  /** How long a CI run containing this PR takes. */
  ciSeconds: number;
  /** PRs this one conflicts with: a run containing both cannot be built. */
  conflictsWith: number[];
}

export interface SandboxPullRequest {
  number: number;
  title: string;
  author: string;
  body: string;
  headSha: string;
  baseBranch: string;
  open: boolean;
  draft: boolean;
  merged: boolean;
  behavior: PrBehavior;
  /** How many files it changes (the queue learns the risk of each size); absent: not said. */
  changedFiles?: number;
  /** The base branch head this PR was last brought up to date with (its own CI ran on that content); absent: never. */
  upToDateWith?: string;
  /** What the queue last showed on this PR (GitHub would show a check run). */
  queueStatus?: { state: string; reason: string; detail?: string; position?: number; estimatedMergeAt?: string };
}

export interface SandboxRepositoryState {
  /** Branch name → head sha. */
  branches: Record<string, string>;
  pullRequests: Record<string, SandboxPullRequest>;
}

export const DEFAULT_BEHAVIOR: PrBehavior = { outcome: 'pass', flakyRate: 0, ciSeconds: 10, conflictsWith: [] };

export function fakeSha(...parts: string[]): string {
  return createHash('sha1').update(parts.join('\u0000')).digest('hex');
}

/** A PR that was never configured exists anyway: it passes and targets `main`. */
export function defaultPullRequest(repoKey: string, prNumber: number): SandboxPullRequest {
  return {
    number: prNumber,
    title: `Sandbox PR #${prNumber}`,
    author: 'sandbox-user',
    body: '',
    headSha: fakeSha(repoKey, 'pr', String(prNumber), '1'),
    baseBranch: 'main',
    open: true,
    draft: false,
    merged: false,
    behavior: { ...DEFAULT_BEHAVIOR },
  };
}
