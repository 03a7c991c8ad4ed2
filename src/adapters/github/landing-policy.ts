import { LRUCache } from 'lru-cache';
import { repoKey, type RepoRef } from '../../domain/repo.js';
import { readBranchPolicy, type BranchPolicy, type PolicyReads } from './branch-policy.js';
import { getData, repoParams, type GitHubClient, type GitHubLog } from './github-client.js';
import type { RepositoryData, RulesetData } from './github-types.js';

/**
 * How long what a repository's landing depends on is taken as read. GitHub tells of a change by webhook
 * (`branch_protection_rule`, `repository_ruleset`, `repository`), and each forgets its repository's at once; this
 * bounds how stale they can be when no webhook came: it was lost, went to another replica, or was never sent (an
 * organization's ruleset reaches only the organization's webhooks).
 */
export const LANDING_POLICY_KEPT_MS = 5 * 60_000;

/**
 * A repository's branch protection and rules, its merge settings and the rulesets' bypass, kept between runs:
 * reading them afresh for every run cost three requests a run (a third of a lone PR's budget) and they rarely
 * change. A caller that would refuse a run on what was kept reads afresh first (`fresh`), so a fix the operator
 * just made is never refused on an old reading.
 */
export class LandingPolicies {
  private readonly kept: LRUCache<string, Promise<unknown>>;

  constructor(private readonly log?: GitHubLog, keptMs = LANDING_POLICY_KEPT_MS) {
    this.kept = new LRUCache({ max: 2_000, ttl: keptMs });
  }

  /**
   * Reads for one repository: kept ones, or (`fresh`) read again now and kept from then. `fromKept` tells whether
   * any answer so far came from what was kept.
   */
  reads(client: GitHubClient, repo: RepoRef, options: { fresh?: boolean } = {}): PolicyReads & { branch(branch: string): Promise<BranchPolicy>; fromKept(): boolean } {
    let fromKept = false;
    const keep = <T>(what: string, read: () => Promise<T>): Promise<T> => {
      const { reading, kept } = this.keep(repo, what, read, options.fresh ?? false);
      fromKept ||= kept;
      return reading;
    };
    return {
      branch: (branch) => keep(`branch\n${branch}`, () => readBranchPolicy(client, repo, branch, this.log)),
      repository: () => keep('repository', () => getData<RepositoryData>(client, 'GET /repos/{owner}/{repo}', repoParams(repo))),
      ruleset: (id) => keep(`ruleset\n${id}`, () => getData<RulesetData>(client, 'GET /repos/{owner}/{repo}/rulesets/{ruleset_id}', { ...repoParams(repo), ruleset_id: id })),
      fromKept: () => fromKept,
    };
  }

  /** GitHub said the repository's protection, rulesets or settings changed: everything kept of it is read again. */
  forget(repo: RepoRef): void {
    const prefix = `${repoKey(repo)}\n`;
    for (const key of [...this.kept.keys()]) if (key.startsWith(prefix)) this.kept.delete(key);
  }

  private keep<T>(repo: RepoRef, what: string, read: () => Promise<T>, fresh: boolean): { reading: Promise<T>; kept: boolean } {
    const key = `${repoKey(repo)}\n${what}`;
    const known = fresh ? undefined : (this.kept.get(key) as Promise<T> | undefined);
    if (known) return { reading: known, kept: true };
    const reading = read();
    this.kept.set(key, reading);
    // A failed read is not kept: the next asks again.
    reading.catch(() => {
      if (this.kept.get(key) === reading) this.kept.delete(key);
    });
    return { reading, kept: false };
  }
}
