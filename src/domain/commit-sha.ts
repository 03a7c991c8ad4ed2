/**
 * A full commit sha (SHA-1 or SHA-256, hex), as the API and the CLI take a PR head. Not an abbreviated one: the queue
 * matches it exactly against the head the host reports, and an abbreviation never matched, so a PR waited NOT_READY
 * for impacted targets it had been given (found by review; the README's own example used one).
 */
export const FULL_SHA = /^(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/;
