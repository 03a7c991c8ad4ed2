import type { ImpactedTargets, PrFacts } from '../engine/model.js';
import type { PullRequestFacts } from '../domain/records.js';
import type { Stores } from '../ports/stores.js';

/**
 * The engine compares target lists pairwise; beyond this size a list is
 * treated as ALL (it overlaps everything), which is always safe and keeps the
 * engine's state small. CI sends ALL itself for lists near the body limit.
 */
export const MAX_ENGINE_TARGETS = 10_000;

export function engineFacts(facts: PullRequestFacts): PrFacts;
export function engineFacts(facts: PullRequestFacts | null): PrFacts | null;
export function engineFacts(facts: PullRequestFacts | null): PrFacts | null {
  if (!facts) return null;
  return {
    headSha: facts.headSha,
    baseBranch: facts.baseBranch,
    open: facts.open && !facts.merged,
    draft: facts.draft,
    mergeability: facts.mergeability,
    ...(facts.rebaseable === false ? { rebaseable: false } : {}),
    ...(facts.checksPending ? { checksPending: true } : {}),
    // The engine derives a risk from the recent outcomes of the author's PRs and of PRs this size (a client's hint takes half of it).
    ...(facts.author ? { author: facts.author } : {}),
    // A count the host gave; anything else (a null stored, a NaN) is no size at all, not the smallest class.
    ...(Number.isInteger(facts.changedFiles) && (facts.changedFiles as number) >= 0 ? { changedFiles: facts.changedFiles } : {}),
    ...(facts.labels ? { labels: facts.labels, readAt: new Date(facts.readAt).getTime() } : {}),
  };
}

/** Targets for a PR head as the engine takes them: a list too long to compare pairwise counts as ALL. */
export function asEngineTargets(sha: string, targets: readonly string[] | 'ALL'): ImpactedTargets {
  return { sha, targets: targets === 'ALL' || targets.length > MAX_ENGINE_TARGETS ? 'ALL' : targets };
}

/** The uploaded targets for this PR head, as the engine takes them. */
export async function engineTargets(stores: Stores, queueId: string, prNumber: number, headSha: string | undefined): Promise<ImpactedTargets | null> {
  if (!headSha) return null;
  const summary = await stores.impactedTargets.summary(queueId, prNumber, headSha);
  if (!summary) return null;
  if (summary.all || summary.count > MAX_ENGINE_TARGETS) return { sha: headSha, targets: 'ALL' };
  const record = await stores.impactedTargets.latest(queueId, prNumber, headSha);
  return record ? asEngineTargets(headSha, record.targets) : null;
}
