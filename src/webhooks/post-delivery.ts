import type { LookupAddress, LookupOptions } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { SignedHeaders } from './signing.js';

/** The result of one attempt; also the `result` label of mq_webhook_deliveries_total. */
export type AttemptResult =
  | { kind: 'delivered'; status: number }
  | { kind: 'failed'; status: number | null; error: string }
  | { kind: 'timeout'; error: string }
  | { kind: 'refused'; error: string }
  /** Not attempted, for the service's own trouble (its resolver failing, a secret its key cannot open): not the endpoint's failure. */
  | { kind: 'deferred'; error: string };

export const MAX_ERROR_LENGTH = 500;

/**
 * POSTs one signed delivery: a timeout on the call, redirects not followed
 * (a 3xx is a failure: following it could lead anywhere, past the URL check),
 * the answer's body never read. 2xx is delivered; anything else failed.
 * `addresses`, when the URL check resolved the host: the connection goes to
 * them, not to what DNS answers now (a name that answered a public
 * address for the check and a private one for the connection, DNS rebinding,
 * would reach the service's own network); the Host header and TLS name stay the URL's.
 */
export async function postDelivery(input: {
  url: URL;
  headers: SignedHeaders;
  body: string;
  userAgent: string;
  timeoutMs: number;
  /** The addresses the URL check found public, the only ones connected to (absent: resolved when connecting). */
  addresses?: readonly string[];
  /** Aborts the call when the worker is stopped for good. */
  abort: AbortSignal;
  /** Test seam: runs after the receiver answered, before the caller records it. */
  afterResponse?: (status: number) => Promise<void>;
}): Promise<AttemptResult> {
  const timeout = AbortSignal.timeout(input.timeoutMs);
  let status: number;
  try {
    status = await post(input, AbortSignal.any([input.abort, timeout]));
  } catch (error) {
    if (timeout.aborted) return { kind: 'timeout', error: `No answer within ${input.timeoutMs} ms.` };
    return { kind: 'failed', status: null, error: networkError(error) };
  }
  await input.afterResponse?.(status);
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status >= 300 && status < 400) return { kind: 'failed', status, error: `HTTP ${status}: redirects are not followed.` };
  return { kind: 'failed', status, error: `HTTP ${status}.` };
}

/** One POST with node:http(s) (which follow no redirect); the answer's status, its body dropped unread. */
function post(input: Parameters<typeof postDelivery>[0], signal: AbortSignal): Promise<number> {
  const pinned = input.addresses && input.addresses.length > 0 ? input.addresses : null;
  const send = input.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(
      input.url,
      {
        method: 'POST',
        headers: { ...input.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(input.body), 'user-agent': input.userAgent },
        signal,
        // No pooled socket: one resolved for another delivery of the same host name must not be reused for this one.
        agent: false,
        ...(pinned ? { lookup: pinnedLookup(pinned) } : {}),
      },
      (response) => {
        resolve(response.statusCode ?? 0);
        // The answer's body is not needed; drop it rather than let a receiver stream to us.
        response.destroy();
      },
    );
    request.once('error', reject);
    request.end(input.body);
  });
}

/**
 * A lookup that answers the addresses the URL check approved, whatever DNS says now, in both forms dns.lookup has:
 * all of them (Node then tries each in turn, as it would DNS's answer), or one of the family asked for.
 */
function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const approved: LookupAddress[] = addresses.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
  return ((_hostname: string, options: LookupOptions, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    if (options.all) return callback(null, approved);
    const chosen = approved.find((a) => !options.family || a.family === options.family) ?? (approved[0] as LookupAddress);
    callback(null, chosen.address, chosen.family);
  }) as LookupFunction;
}

function errorMessage(error: unknown): string | undefined {
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message !== '' ? message : undefined;
}

/** A sentence for a network failure (its code and message, or its cause's). */
function networkError(error: unknown): string {
  const cause = typeof error === 'object' && error !== null ? ((error as { cause?: unknown }).cause ?? error) : undefined;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  const why = errorMessage(cause) ?? errorMessage(error);
  if (!why) return 'The request failed.';
  return `The request failed: ${typeof code === 'string' && !why.includes(code) ? `${code} ` : ''}${why}`.slice(0, MAX_ERROR_LENGTH);
}
