import type { EngineEntry, EngineState } from './model.js';

/** Why an entry may not be tested yet; null when it may. The API shows the same facts. */
export type NotReadyReason = 'unknown_to_host' | 'closed' | 'draft' | 'base_mismatch' | 'not_mergeable' | 'awaiting_mergeability' | 'awaiting_impacted_targets';

export function notReadyReason(state: EngineState, entry: EngineEntry): NotReadyReason | null {
  const facts = entry.facts;
  if (!facts) return 'unknown_to_host';
  if (!facts.open) return 'closed';
  if (facts.draft) return 'draft';
  if (facts.baseBranch !== state.targetBranch) return 'base_mismatch';
  if (facts.mergeability === 'not_mergeable') return 'not_mergeable';
  if (facts.mergeability !== 'mergeable') return 'awaiting_mergeability';
  if (state.config.mode === 'parallel' && entry.targets?.sha !== facts.headSha) return 'awaiting_impacted_targets';
  return null;
}

export function isAdmissible(state: EngineState, entry: EngineEntry): boolean {
  return notReadyReason(state, entry) === null;
}
