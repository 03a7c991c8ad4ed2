import { LRUCache } from 'lru-cache';
import { repoKey, type RepoRef } from '../../domain/repo.js';
import { readBranchPolicy, type BranchPolicy, type PolicyReads } from './branch-policy.js';
import { getData, repoParams, type GitHubClient, type GitHubLog } from './github-client.js';
import type { RepositoryData, RulesetData } from './github-types.js';

/**
 * How long a repository's merge settings and its rulesets' bypass are taken as read. They only predict a
 * refusal before any CI is spent: one kept too long either predicts nothing, and GitHub's refusal of the
 * landing says it instead (which forgets them), or predicts a refusal, which is read afresh before it is said.
 */
export const SETTINGS_KEPT_MS = 5 * 60_000;
/**
 * How long a branch's protection and rules are taken as read for telling a blocked PR's block apart. A run
 * always reads them afresh: the checks that decide it come from them, and a ruleset the App may bypass would
 * not stop a landing that lacks a check added since.
 */
export const BRANCH_KEPT_MS = 60_000;

/** One repository's reads (LandingPolicies.reads): the prediction's, and its branch's policy. */
export interface RepositoryPolicyReads extends PolicyReads {
  /** Kept for BRANCH_KEPT_MS. */
  branch(branch: string): Promise<BranchPolicy>;
  /** Always read (and kept from then). */
  branchNow(branch: string): Promise<BranchPolicy>;
  /** Whether any answer so far came from what was kept. */
  fromKept(): boolean;
}

/**
 * What a landing depends on, kept a while: reading the repository's settings for every run cost a request a
 * run (bench:github) and they rarely change.
 */
export class LandingPolicies {
  private readonly kept = new LRUCache<string, Promise<unknown>>({ max: 2_000, ttl: SETTINGS_KEPT_MS });

  constructor(
    private readonly log?: GitHubLog,
    private readonly settingsKeptMs = SETTINGS_KEPT_MS,
  ) {}

  /** Reads for one repository: kept ones, or (`fresh`) read again now and kept from then. */
  reads(client: GitHubClient, repo: RepoRef, options: { fresh?: boolean } = {}): RepositoryPolicyReads {
    let fromKept = false;
    const keep = <T>(what: string, keptMs: number, read: () => Promise<T>, fresh = options.fresh ?? false): Promise<T> => {
      const { reading, kept } = this.keep(`${repoKey(repo)}\n${what}`, keptMs, read, fresh);
      fromKept ||= kept;
      return reading;
    };
    const branchPolicy = (branch: string) => () => readBranchPolicy(client, repo, branch, this.log);
    return {
      branch: (branch) => keep(`branch\n${branch}`, BRANCH_KEPT_MS, branchPolicy(branch)),
      branchNow: (branch) => keep(`branch\n${branch}`, BRANCH_KEPT_MS, branchPolicy(branch), true),
      repository: () => keep('repository', this.settingsKeptMs, () => getData<RepositoryData>(client, 'GET /repos/{owner}/{repo}', repoParams(repo))),
      ruleset: (id) => keep(`ruleset\n${id}`, this.settingsKeptMs, () => getData<RulesetData>(client, 'GET /repos/{owner}/{repo}/rulesets/{ruleset_id}', { ...repoParams(repo), ruleset_id: id })),
      fromKept: () => fromKept,
    };
  }

  /** GitHub refused a landing for a reason no PR caused: what was kept of the repository is read again. */
  forget(repo: RepoRef): void {
    const prefix = `${repoKey(repo)}\n`;
    for (const key of [...this.kept.keys()]) if (key.startsWith(prefix)) this.kept.delete(key);
  }

  private keep<T>(key: string, keptMs: number, read: () => Promise<T>, fresh: boolean): { reading: Promise<T>; kept: boolean } {
    const known = fresh ? undefined : (this.kept.get(key) as Promise<T> | undefined);
    if (known) return { reading: known, kept: true };
    const reading = read();
    this.kept.set(key, reading, { ttl: keptMs });
    // A failed read is not kept: the next asks again.
    reading.catch(() => {
      if (this.kept.get(key) === reading) this.kept.delete(key);
    });
    return { reading, kept: false };
  }
}
