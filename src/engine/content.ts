import type { AppliedHead, EngineEntry, EngineRun, EngineState, KnownBase } from './model.js';

/**
 * Content identity. A run tests "root sha + these PR heads in this order"; a
 * sha the queue produced by merging is known as such, so a run built before
 * that merge still describes the same content afterwards.
 */
export function token(head: AppliedHead): string {
  return `${head.entryId}@${head.headSha}`;
}

export function headOf(entry: EngineEntry): AppliedHead {
  return { entryId: entry.id, headSha: entry.facts?.headSha ?? '' };
}

export function normalizeBase(state: EngineState, sha: string): KnownBase {
  return state.knownBases[sha] ?? { root: sha, heads: [] };
}

/** Everything a run applies on its root, as tokens in order. */
export function runContent(state: EngineState, run: EngineRun): KnownBase {
  const base = normalizeBase(state, run.baseSha);
  return { root: base.root, heads: [...base.heads, ...run.ahead.map(token), ...run.unit.map(token)] };
}

export function sameContent(a: KnownBase, b: KnownBase): boolean {
  return a.root === b.root && a.heads.length === b.heads.length && a.heads.every((h, i) => h === b.heads[i]);
}

/** Two PRs interact when their impacted targets share one; ALL interacts with everything. */
export function overlaps(a: EngineEntry, b: EngineEntry): boolean {
  const ta = a.targets?.targets;
  const tb = b.targets?.targets;
  if (!ta || !tb) return true; // Unknown targets: assume the worst.
  if (ta === 'ALL' || tb === 'ALL') return true;
  const [small, large] = ta.length <= tb.length ? [ta, tb] : [tb, ta];
  const set = new Set(large);
  return small.some((t) => set.has(t));
}
