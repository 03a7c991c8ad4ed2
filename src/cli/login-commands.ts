import type { Command } from 'commander';
import { CliError, usageError } from './cli-error.js';
import { checkedToken, chooseBaseUrl, timeoutMs, type ConnectionOptions } from './connection.js';
import { credentialsPath, readCredentials, writeCredentials } from './credentials.js';
import { postApi } from './http-client.js';
import type { CliContext } from './io.js';

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** The token to save: --token, else MQ_TOKEN, else typed at a prompt or piped in. */
async function tokenToSave(ctx: CliContext, opts: ConnectionOptions, baseUrl: string): Promise<string> {
  // Blank counts as unset, as for every other command (`MQ_TOKEN= mq login` asks).
  const given = opts.token?.trim() || ctx.env.MQ_TOKEN?.trim() || (ctx.io.readSecret ? await ctx.io.readSecret(`Token for ${baseUrl}: `) : '');
  const token = given.trim();
  if (!token) throw usageError('no token: set MQ_TOKEN or pipe it in (from `mq token create`); --token works too, but leaves it in the shell history');
  return checkedToken(token, opts.token?.trim() ? '--token' : ctx.env.MQ_TOKEN?.trim() ? 'MQ_TOKEN' : 'the prompt');
}

/** `mq login`: checks the token against the server, then saves it for that URL (file 0600). */
async function login(ctx: CliContext, opts: ConnectionOptions): Promise<void> {
  const credentials = await readCredentials(ctx.env);
  const { baseUrl } = chooseBaseUrl(opts, ctx.env, credentials);
  const token = await tokenToSave(ctx, opts, baseUrl);
  let queues: number;
  try {
    queues = (await postApi<{ queues: unknown[] }>({ baseUrl, token, timeoutMs: timeoutMs(ctx.env) }, 'listQueues', {})).body.queues.length;
  } catch (error) {
    if (error instanceof CliError) throw new CliError(`${error.message.replace(/\.$/, '')}; nothing saved`, error.exitCode);
    throw error;
  }
  credentials.servers[baseUrl] = { token, savedAt: new Date().toISOString() };
  credentials.defaultUrl = baseUrl;
  await writeCredentials(ctx.env, credentials);
  const path = credentialsPath(ctx.env);
  const url = new URL(baseUrl);
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname)) ctx.io.stderr(`mq: warning: ${baseUrl} is plain http, so the token crosses the network unencrypted; prefer https://`);
  if (opts.json) return ctx.io.stdout(JSON.stringify({ url: baseUrl, credentialsFile: path, queues }));
  ctx.io.stdout(`Signed in to ${baseUrl} (${queues} queue${queues === 1 ? '' : 's'} visible); token saved in ${path}.`);
}

/** `mq logout`: forgets the token saved for the URL (the file goes with the last one). */
async function logout(ctx: CliContext, opts: ConnectionOptions & { all?: boolean }): Promise<void> {
  const credentials = await readCredentials(ctx.env);
  const { baseUrl } = chooseBaseUrl(opts, ctx.env, credentials);
  const forgotten = opts.all ? Object.keys(credentials.servers) : credentials.servers[baseUrl] ? [baseUrl] : [];
  for (const url of forgotten) delete credentials.servers[url];
  if (credentials.defaultUrl && !credentials.servers[credentials.defaultUrl]) delete credentials.defaultUrl;
  if (forgotten.length > 0) await writeCredentials(ctx.env, credentials);
  if (opts.json) return ctx.io.stdout(JSON.stringify({ signedOut: forgotten }));
  ctx.io.stdout(forgotten.length === 0 ? `Not signed in to ${baseUrl}; nothing to forget.` : `Signed out of ${forgotten.join(', ')}.`);
}

export function registerLoginCommands(program: Command, ctx: CliContext): void {
  program
    .command('login')
    .description('Check a token against the service and save it for that URL (the default URL from then on)')
    .option('--url <url>', 'the service, e.g. https://mq.example.com (default: MQ_URL, else the last login, else http://127.0.0.1:3000)')
    .option('--token <token>', 'the token (default: MQ_TOKEN, else read from a prompt or stdin)')
    .option('--json', 'print {url, credentialsFile, queues}')
    .action((opts: ConnectionOptions) => login(ctx, opts));
  program
    .command('logout')
    .description('Forget the token saved for the URL')
    .option('--url <url>', 'the service (default: MQ_URL, else the last login)')
    .option('--all', 'forget every saved token')
    .option('--json', 'print {signedOut: [urls]}')
    .action((opts: ConnectionOptions & { all?: boolean }) => logout(ctx, opts));
}
