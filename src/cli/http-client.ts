import { CliError, EXIT, oneLine } from './cli-error.js';

/** What a request needs: the service's base URL, a token (login checks one before saving it) and a time limit. */
export interface Target {
  baseUrl: string;
  token: string;
  tokenSource?: string;
  timeoutMs: number;
}

/** A successful answer: the body as the server sent it (what `--json` prints) and parsed. */
export interface Answer<T> {
  text: string;
  body: T;
}

const NETWORK_CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
};

/** The exit code of an HTTP error status. */
export function exitCodeOf(status: number): number {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404) return EXIT.notFound;
  if (status >= 500) return EXIT.unavailable;
  return EXIT.usage;
}

function unreachable(url: string, error: unknown, timeoutMs: number): CliError {
  const name = (error as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError') return new CliError(`${url} did not answer within ${timeoutMs / 1000} s`, EXIT.unavailable);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code;
  // Only a network cause is named: fetch's own errors may quote what was sent (a header's value: the token).
  const why = (code && NETWORK_CAUSES[code]) ?? cause?.message ?? code ?? 'the request could not be sent';
  return new CliError(`cannot reach ${url} (${why}): is the service running there? Set --url or MQ_URL`, EXIT.unavailable);
}

/**
 * POST `/v1/<endpoint>` with `x-api-token`; resolves with the 200 answer or
 * throws a CliError whose message is the server's one-line error, prefixed
 * with the status. Redirects are not followed: a POST turned into a GET would
 * fail in a confusing way, and the token should go to the address given.
 */
export async function postApi<T>(target: Target, endpoint: string, body: object): Promise<Answer<T>> {
  const url = `${target.baseUrl}/v1/${endpoint}`;
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-token': target.token },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(target.timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    throw unreachable(url, error, target.timeoutMs);
  }
  const type = response.headers.get('content-type') ?? '';
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.get('location');
    // The service's address, not the endpoint's (found by review: given as --url, `/v1/<endpoint>` was doubled).
    const base = location?.replace(new RegExp(`/v1/${endpoint}/?(?:[?#].*)?$`), '');
    throw new CliError(`${response.status} ${url} redirects${location ? ` to ${location}` : ''}: use ${base && base !== location ? base : 'the address it redirects to'} as --url`, EXIT.usage);
  }
  if (response.ok) {
    if (!type.includes('json')) throw new CliError(`${url} answered with ${type || 'no content type'}, not the merge queue API: check --url`, EXIT.unavailable);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new CliError(`${url} answered with JSON that does not parse`, EXIT.unavailable);
    }
    // Every answer of the API is an object: anything else is another service at that address.
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CliError(`${url} answered with JSON that is not the merge queue API's: check --url`, EXIT.unavailable);
    return { text, body: parsed as T };
  }
  // The API's errors are one plain-text sentence; a proxy's page is not worth printing.
  const sentence = type.includes('html') || text.trimStart().startsWith('<') || text.trim() === '' ? response.statusText || 'error' : text;
  let message = `${response.status} ${oneLine(sentence, 400)}`;
  if (response.status === 401 && target.tokenSource) message = `${message.replace(/\.$/, '')} (token from ${target.tokenSource}).`;
  throw new CliError(message, exitCodeOf(response.status));
}
