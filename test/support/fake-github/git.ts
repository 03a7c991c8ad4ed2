import { createHash } from 'node:crypto';
import type { Commit, Repo, Sha } from './model.js';

/**
 * Content and history: commits, trees as ordered change lists, ancestry and the
 * three-way merge. Pure functions over the commit table, so the rules are in one
 * place whichever route (PR merge, merges API, test helper) applies them.
 */

let shaCounter = 0;

/** A 40-hex id; a counter keeps two otherwise identical commits distinct, as timestamps do in git. */
export function newSha(...parts: string[]): Sha {
  shaCounter += 1;
  return createHash('sha1').update(`${parts.join('\u0000')}\u0000${shaCounter}`).digest('hex');
}

/** The tree's identity: equal trees (same changes, same order) have equal tree shas. */
export function treeSha(tree: readonly string[]): Sha {
  return createHash('sha1').update(`tree\u0000${tree.join('\n')}`).digest('hex');
}

export type MergeResult = { ok: true; tree: string[]; added: string[] } | { ok: false; conflict: [string, string] };

/**
 * Applies `head` onto `base`. Changes only the base has (not seen by the head) and
 * changes only the head has conflict when the test declared their keys conflicting;
 * otherwise the result is the base's tree followed by the head's new changes in the
 * head's order. Content based, not ancestry based: a squash-merged change already on
 * the base counts as present, as git's merge of identical hunks would.
 */
export function mergeTrees(repo: Repo, base: readonly string[], head: readonly string[]): MergeResult {
  const inBase = new Set(base);
  const inHead = new Set(head);
  const baseOnly = base.filter((c) => !inHead.has(c));
  const added = head.filter((c) => !inBase.has(c));
  for (const b of baseOnly) {
    for (const h of added) {
      const kb = repo.changes.get(b)?.conflictKey ?? b;
      const kh = repo.changes.get(h)?.conflictKey ?? h;
      if (kb !== kh && repo.conflicts.has(conflictPair(kb, kh))) return { ok: false, conflict: [b, h] };
    }
  }
  return { ok: true, tree: [...base, ...added], added };
}

export function conflictPair(a: string, b: string): string {
  return a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
}

/** True when `ancestor` is `descendant` or reachable from it through parents. */
export function isAncestor(commits: Map<Sha, Commit>, ancestor: Sha, descendant: Sha): boolean {
  const seen = new Set<Sha>();
  const stack = [descendant];
  while (stack.length > 0) {
    const sha = stack.pop()!;
    if (sha === ancestor) return true;
    if (seen.has(sha)) continue;
    seen.add(sha);
    stack.push(...(commits.get(sha)?.parents ?? []));
  }
  return false;
}

/** Commits reachable from `head` but not from `base`, oldest first (what `base...head` lists). */
export function commitsBetween(commits: Map<Sha, Commit>, base: Sha, head: Sha): Commit[] {
  const fromBase = new Set<Sha>();
  const walk = (start: Sha, into: Set<Sha>, stopAt?: Set<Sha>) => {
    const stack = [start];
    while (stack.length > 0) {
      const sha = stack.pop()!;
      if (into.has(sha) || stopAt?.has(sha)) continue;
      into.add(sha);
      stack.push(...(commits.get(sha)?.parents ?? []));
    }
  };
  walk(base, fromBase);
  const fromHead = new Set<Sha>();
  walk(head, fromHead, fromBase);
  return [...fromHead].map((sha) => commits.get(sha)!).filter(Boolean).reverse();
}

/** The nearest common ancestor (breadth-first from head), or undefined for unrelated histories. */
export function mergeBase(commits: Map<Sha, Commit>, a: Sha, b: Sha): Sha | undefined {
  const fromA = new Set<Sha>();
  const stack = [a];
  while (stack.length > 0) {
    const sha = stack.pop()!;
    if (fromA.has(sha)) continue;
    fromA.add(sha);
    stack.push(...(commits.get(sha)?.parents ?? []));
  }
  const queue = [b];
  const seen = new Set<Sha>();
  while (queue.length > 0) {
    const sha = queue.shift()!;
    if (fromA.has(sha)) return sha;
    if (seen.has(sha)) continue;
    seen.add(sha);
    queue.push(...(commits.get(sha)?.parents ?? []));
  }
  return undefined;
}
