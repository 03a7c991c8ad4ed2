/**
 * Expected outcomes of a use case are values, not exceptions. The API maps each
 * failure kind to its status; the message is the plain-text body.
 */
export type Failure =
  | { kind: 'invalid'; message: string }
  | { kind: 'not_found'; message: string }
  | { kind: 'conflict'; message: string }
  /** Something the request needs could not be checked just now (not the caller's fault): try again. */
  | { kind: 'unavailable'; message: string };

export type Outcome<T> = { ok: true; value: T } | { ok: false; failure: Failure };

export const succeed = <T>(value: T): Outcome<T> => ({ ok: true, value });
export const invalid = (message: string): Outcome<never> => ({ ok: false, failure: { kind: 'invalid', message } });
export const notFound = (message: string): Outcome<never> => ({ ok: false, failure: { kind: 'not_found', message } });
export const conflict = (message: string): Outcome<never> => ({ ok: false, failure: { kind: 'conflict', message } });
export const unavailable = (message: string): Outcome<never> => ({ ok: false, failure: { kind: 'unavailable', message } });
