/**
 * Recent outcomes of concluded PRs (1 = failed, 0 = merged), newest last: the
 * queue keeps one list for its break rate and one per author (author-risk.ts).
 * Only the last few count, so the state stays small and old history fades.
 */
export type Outcomes = readonly number[];

/** The list with one more outcome, keeping the newest `kept`. */
export function withOutcome(outcomes: Outcomes, failed: 0 | 1, kept: number): number[] {
  return [...outcomes, failed].slice(-kept);
}

/**
 * The failure share of `outcomes` pulled towards `prior` as if `priorWeight`
 * outcomes at that rate had been seen too: the mean of a Beta posterior, so a
 * short record moves the estimate little and a long one speaks for itself.
 */
export function shrunkFailureRate(outcomes: Outcomes, prior: number, priorWeight: number): number {
  const failures = outcomes.reduce((sum, o) => sum + o, 0);
  return (failures + prior * priorWeight) / (outcomes.length + priorWeight);
}
