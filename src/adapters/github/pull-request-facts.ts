import type { HostMergeability, PullRequestFacts } from '../../domain/records.js';
import type { PullRequestData } from './github-types.js';

/** The fields of GitHub's pull request JSON the queue reads (REST answers and webhook payloads both have them). */
export type PullRequestJson = Pick<
  PullRequestData,
  'title' | 'user' | 'head' | 'base' | 'state' | 'draft' | 'merged' | 'mergeable' | 'mergeable_state' | 'html_url' | 'body' | 'rebaseable'
> &
  // Only the single-PR answers and webhook payloads carry it; `labels` every answer, but not every caller's JSON.
  Partial<Pick<PullRequestData, 'changed_files' | 'labels'>>;

/**
 * GitHub's mergeability in the queue's words. GitHub computes `mergeable` in
 * the background: null means "not yet", so the caller reads again later.
 * `mergeable_state` adds branch protection and rulesets on top of conflicts:
 * `blocked` is a missing required review or required PR check (a block that
 * only waits for checks is told apart by blocked-by-checks), `dirty` a
 * conflict. `behind` is mergeable for a queue: it tests on top of the current
 * base anyway. Closed PRs are never computed, so they get no verdict.
 */
export function toMergeability(pr: Pick<PullRequestJson, 'state' | 'merged' | 'mergeable' | 'mergeable_state'>): HostMergeability {
  if (pr.state !== 'open' || pr.merged) return 'unspecified';
  if (pr.mergeable === null || pr.mergeable === undefined) return 'in_progress';
  if (pr.mergeable === false) return 'not_mergeable';
  switch (pr.mergeable_state) {
    case 'clean':
    case 'unstable': // Only non-required checks fail: GitHub would merge it.
    case 'has_hooks':
    case 'behind':
    case 'draft': // Draftness is its own fact; the content merges.
      return 'mergeable';
    case 'blocked':
    case 'dirty':
      return 'not_mergeable';
    default:
      // `unknown` (still computing) and any state GitHub adds later: ask again rather than guess.
      return 'in_progress';
  }
}

/** `checksPending`: GitHub's `blocked` waits only for required checks of the head (see blocked-by-checks). */
export function toPullRequestFacts(pr: PullRequestJson, readAt: Date, checksPending = false): PullRequestFacts {
  const mergeability = toMergeability(pr);
  return {
    title: pr.title,
    author: pr.user?.login ?? '',
    headSha: pr.head.sha,
    baseBranch: pr.base.ref,
    open: pr.state === 'open',
    draft: pr.draft ?? false,
    merged: pr.merged ?? false,
    mergeability,
    ...(checksPending && mergeability === 'not_mergeable' ? { checksPending: true } : {}),
    // Only a definite "no" counts (null: GitHub is still working it out).
    ...(pr.state === 'open' && pr.rebaseable === false ? { rebaseable: false } : {}),
    ...(typeof pr.changed_files === 'number' ? { changedFiles: pr.changed_files } : {}),
    ...(Array.isArray(pr.labels) ? { labels: pr.labels.map((label) => label.name.toLowerCase()) } : {}),
    url: pr.html_url,
    ...(pr.body ? { body: pr.body } : {}),
    readAt,
  };
}
