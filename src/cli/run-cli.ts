import { Command, CommanderError } from 'commander';
import { CliError, EXIT, oneLine } from './cli-error.js';
import type { CliContext, CliIo } from './io.js';
import { registerLoginCommands } from './login-commands.js';
import { registerPullRequestCommands } from './pr-commands.js';
import { registerQueueCommands } from './queue-commands.js';
import { registerTokenCommands, type TokenCommandsState } from './token-commands.js';

export type { CliIo } from './io.js';

const HELP_AFTER = `
Queue and PR commands talk to the service's HTTP API (/v1 with x-api-token) at
--url, MQ_URL, the last \`mq login\`, or http://127.0.0.1:3000; token from --token,
MQ_TOKEN, or \`mq login\`. The queue: --repo owner/name (or host/owner/name, or
MQ_REPO), --branch (MQ_BRANCH, default main). \`mq token ...\` works on the
database directly, with the service's configuration (MONGODB_URI, ...).

Exit codes:
  0  done
  1  bad usage or input, or another 4xx from the server (e.g. 400, 409)
  2  not signed in, or the token refused (401) or not allowed there (403)
  3  not found (404): no such queue, or the PR was never submitted to it
  4  server unreachable, timed out (MQ_TIMEOUT_SECONDS, default 15), or 5xx

Errors are one line on stderr, starting with "mq: ". --json prints the API's
answer as is on stdout.`;

/**
 * The `mq` command. Returns the exit code instead of exiting, so tests can run
 * it in-process; the people commands throw CliError, whose message becomes
 * the one line on stderr.
 */
export async function runCli(argv: string[], env: Record<string, string | undefined>, terminal: CliIo): Promise<number> {
  // What the server says (PR titles, check names, messages) is printed: control characters in it could move the
  // cursor or rewrite the terminal, so none reach it (JSON output escapes them already).
  const io: CliIo = { ...terminal, stdout: (line) => terminal.stdout(printable(line)), stderr: (line) => terminal.stderr(printable(line)) };
  const ctx: CliContext = { env, io };
  const tokenState: TokenCommandsState = { exitCode: 0 };

  const program = new Command('mq')
    .description('Merge queue: queues and pull requests over the HTTP API, tokens on the database')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout(s.trimEnd()),
      writeErr: (s) => io.stderr(s.trimEnd()),
      // Commander's own errors ("unknown option", "(Did you mean ...?)") on one line too.
      outputError: (s, write) => write(`mq: ${oneLine(s.replace(/^error:\s*/, ''))}`),
    })
    .showSuggestionAfterError()
    .addHelpText('after', HELP_AFTER);

  registerLoginCommands(program, ctx);
  registerQueueCommands(program, ctx);
  registerPullRequestCommands(program, ctx);
  registerTokenCommands(program, ctx, tokenState);

  let exitCode: number;
  try {
    await program.parseAsync(argv, { from: 'user' });
    exitCode = tokenState.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) exitCode = error.exitCode;
    else if (error instanceof CliError) {
      if (error.message) io.stderr(`mq: ${oneLine(error.message)}`);
      exitCode = error.exitCode;
    } else {
      // Always one `mq:` line, whatever failed (found by review: a bare Node error came out).
      io.stderr(`mq: ${oneLine(error instanceof Error ? error.message : String(error))}`);
      exitCode = EXIT.usage;
    }
  } finally {
    await tokenState.database?.close();
  }
  return exitCode;
}

/**
 * The line with control characters (C0 but tab and newline, DEL, C1: escape sequences among them) shown as U+FFFD. JSON
 * (`--json`) keeps its data: DEL and C1, which JSON may hold raw, are escaped instead (`\u009b`), so a script parses what
 * the API answered (found by review: they were replaced).
 */
export function printable(line: string): string {
  if (/^[[{]/.test(line) && isJson(line)) return line.replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  // eslint-disable-next-line no-control-regex
  return line.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\ufffd');
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
