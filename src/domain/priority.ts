/**
 * Priority of a queued pull request: lower is more urgent. Clients may send a
 * name or a number 0..255; both are stored as the number.
 */
export const PRIORITY_NAMES = { urgent: 0, high: 10, medium: 100, low: 200 } as const;
export type PriorityName = keyof typeof PRIORITY_NAMES;

export const DEFAULT_PRIORITY = PRIORITY_NAMES.medium;
export const MAX_PRIORITY_VALUE = 255;

/** Whether a value can be stored as a priority: an integer from 0 to MAX_PRIORITY_VALUE. */
export function isPriority(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_PRIORITY_VALUE;
}

/** The name of a value, when it is exactly one of the named levels. */
export function priorityNameOf(value: number): PriorityName | undefined {
  return (Object.keys(PRIORITY_NAMES) as PriorityName[]).find((name) => PRIORITY_NAMES[name] === value);
}

/** Only `urgent` jumps the line: it may interrupt runs already testing. */
export function skipsTheLine(value: number): boolean {
  return value === PRIORITY_NAMES.urgent;
}
