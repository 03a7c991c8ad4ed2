import { CliError, EXIT, usageError } from './cli-error.js';
import { readCredentials, type Credentials, type Env } from './credentials.js';

export const DEFAULT_URL = 'http://127.0.0.1:3000';
const DEFAULT_TIMEOUT_SECONDS = 15;

/** Where a command sends its requests, with what token, and where both came from (for error messages). */
export interface Connection {
  baseUrl: string;
  urlSource: string;
  token: string;
  tokenSource: string;
  timeoutMs: number;
}

export interface ConnectionOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

/**
 * The service's address as credentials are keyed by it: scheme, host, port and
 * any path prefix (a reverse proxy's), without a trailing slash or `/v1`.
 */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw usageError(`${raw} is not a URL; use e.g. --url https://mq.example.com`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`${raw} is not an http:// or https:// URL`);
  if (url.username || url.password) throw usageError(`${url.origin}: put the token in --token or MQ_TOKEN, not in the URL`);
  if (url.search || url.hash) throw usageError(`${raw}: the URL takes no query or fragment`);
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${url.origin}${path}`;
}

/** `--url`, else `MQ_URL`, else the URL of the last `mq login`, else http://127.0.0.1:3000. */
export function chooseBaseUrl(opts: ConnectionOptions, env: Env, credentials: Credentials): { baseUrl: string; urlSource: string } {
  if (opts.url) return { baseUrl: normalizeBaseUrl(opts.url), urlSource: '--url' };
  if (env.MQ_URL) return { baseUrl: normalizeBaseUrl(env.MQ_URL), urlSource: 'MQ_URL' };
  if (credentials.defaultUrl) return { baseUrl: normalizeBaseUrl(credentials.defaultUrl), urlSource: 'mq login' };
  return { baseUrl: DEFAULT_URL, urlSource: 'the default' };
}

/** The longest time limit a timer can hold (2^31 - 1 ms): longer, Node's timer fires at once. */
const MAX_TIMEOUT_SECONDS = 2_147_483;

export function timeoutMs(env: Env): number {
  const raw = env.MQ_TIMEOUT_SECONDS;
  if (raw === undefined || raw === '') return DEFAULT_TIMEOUT_SECONDS * 1000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_TIMEOUT_SECONDS) throw usageError(`MQ_TIMEOUT_SECONDS must be a number of seconds above 0 and at most ${MAX_TIMEOUT_SECONDS}, not ${raw}`);
  return Math.max(1, Math.round(seconds * 1000));
}

/**
 * A token as a header can carry it: printable ASCII without spaces (found by review: a token read with a line break
 * and more after it was refused by fetch, whose error, printed, held the whole value). Never echoed.
 */
export function checkedToken(token: string, source: string): string {
  if (!/^[\x21-\x7e]+$/.test(token)) throw usageError(`the token from ${source} holds a space, line break or other character no token has: give the token alone`);
  return token;
}

/** The URL as above; the token from `--token`, else `MQ_TOKEN`, else the one `mq login` saved for that URL. */
export async function resolveConnection(opts: ConnectionOptions, env: Env): Promise<Connection> {
  // The file is read only when needed: flags or the environment may say everything.
  const needsFile = !(opts.url || env.MQ_URL) || !(opts.token || env.MQ_TOKEN);
  const credentials = needsFile ? await readCredentials(env) : { servers: {} };
  const { baseUrl, urlSource } = chooseBaseUrl(opts, env, credentials);
  const base = { baseUrl, urlSource, timeoutMs: timeoutMs(env) };
  if (opts.token?.trim()) return { ...base, token: checkedToken(opts.token.trim(), '--token'), tokenSource: '--token' };
  if (env.MQ_TOKEN?.trim()) return { ...base, token: checkedToken(env.MQ_TOKEN.trim(), 'MQ_TOKEN'), tokenSource: 'MQ_TOKEN' };
  const saved = credentials.servers[baseUrl];
  if (saved) return { ...base, token: saved.token, tokenSource: 'mq login' };
  // Not `--token mq_...`: a token in the command line lands in the shell's history and the process list.
  throw new CliError(`not signed in to ${baseUrl}: run \`mq login --url ${baseUrl}\` (it asks for the token), or set MQ_TOKEN`, EXIT.auth);
}
