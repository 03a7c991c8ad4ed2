const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Waits before each retry: about two days in all (47 h), so a receiver down
 * for a day still gets everything. The attempt after the last wait is the final one.
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [30 * SECOND, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR];

/** ±20 %: endpoints coming back are not hit by every retry in the same second. */
export const DEFAULT_JITTER = 0.2;

/**
 * The wait after the n-th failed attempt of a schedule (n from 1), or null when
 * retries are exhausted. `random` is in [0, 1): injectable, so tests are deterministic.
 */
export function retryDelay(failedAttempts: number, schedule: readonly number[], random: () => number, jitter = DEFAULT_JITTER): number | null {
  const base = schedule[failedAttempts - 1];
  if (base === undefined) return null;
  const factor = 1 - jitter + 2 * jitter * Math.min(Math.max(random(), 0), 1);
  return Math.max(0, Math.round(base * factor));
}
