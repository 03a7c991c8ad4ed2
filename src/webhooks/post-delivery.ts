import type { SignedHeaders } from './signing.js';

/** The result of one attempt; also the `result` label of mq_webhook_deliveries_total. */
export type AttemptResult =
  | { kind: 'delivered'; status: number }
  | { kind: 'failed'; status: number | null; error: string }
  | { kind: 'timeout'; error: string }
  | { kind: 'refused'; error: string };

export const MAX_ERROR_LENGTH = 500;

/**
 * POSTs one signed delivery: a timeout on the call, redirects not followed
 * (a 3xx is a failure: following it could lead anywhere, past the URL check),
 * the answer's body never read. 2xx is delivered; anything else failed.
 */
export async function postDelivery(input: {
  url: URL;
  headers: SignedHeaders;
  body: string;
  userAgent: string;
  timeoutMs: number;
  /** Aborts the call when the worker is stopped for good. */
  abort: AbortSignal;
  /** Test seam: runs after the receiver answered, before the caller records it. */
  afterResponse?: (status: number) => Promise<void>;
}): Promise<AttemptResult> {
  let response: Response;
  try {
    response = await fetch(input.url, {
      method: 'POST',
      headers: { ...input.headers, 'content-type': 'application/json', 'user-agent': input.userAgent },
      body: input.body,
      redirect: 'manual',
      signal: AbortSignal.any([input.abort, AbortSignal.timeout(input.timeoutMs)]),
    });
    // The answer's body is not needed; drop it rather than let a receiver stream to us.
    await response.body?.cancel().catch(() => undefined);
  } catch (error) {
    // Duck-typed: errors from fetch may come from another realm (not instanceof this Error).
    if (errorName(error) === 'TimeoutError') return { kind: 'timeout', error: `No answer within ${input.timeoutMs} ms.` };
    return { kind: 'failed', status: null, error: networkError(error) };
  }
  await input.afterResponse?.(response.status);
  if (response.status >= 200 && response.status < 300) return { kind: 'delivered', status: response.status };
  if (response.status >= 300 && response.status < 400) return { kind: 'failed', status: response.status, error: `HTTP ${response.status}: redirects are not followed.` };
  return { kind: 'failed', status: response.status, error: `HTTP ${response.status}.` };
}

function errorName(error: unknown): string | undefined {
  const name = typeof error === 'object' && error !== null ? (error as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : undefined;
}

function errorMessage(error: unknown): string | undefined {
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message !== '' ? message : undefined;
}

/** A sentence for a network failure: fetch's own message is just "fetch failed", the cause says why. */
function networkError(error: unknown): string {
  const cause = typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  const why = errorMessage(cause) ?? errorMessage(error);
  if (!why) return 'The request failed.';
  return `The request failed: ${typeof code === 'string' && !why.includes(code) ? `${code} ` : ''}${why}`.slice(0, MAX_ERROR_LENGTH);
}
