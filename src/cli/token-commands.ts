import type { Command } from 'commander';
import type { OpenDatabase } from '../database.js';
import type { ApiTokenRecord } from '../domain/records.js';
import type { TokenService } from '../tokens/token-service.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './io.js';

// The same rules as the API's repo schema, without loading zod for every `mq` call.
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$/;
const OWNER = /^[^\s/]{1,100}$/;

function tokenLine(t: ApiTokenRecord): string {
  const status = t.revokedAt ? `revoked ${t.revokedAt.toISOString()}` : 'active';
  return [t.id, `${t.host}/${t.owner}`, t.prefix + '…', t.createdAt.toISOString(), status, t.name].join('\t');
}

/** What the admin commands share with runCli: their exit code, and the database to close at the end. */
export interface TokenCommandsState {
  exitCode: number;
  database?: OpenDatabase;
}

/**
 * `mq token create|list|revoke`: administration on the database itself (the
 * service's configuration: MONGODB_URI or the local FerretDB). The database
 * code is imported only when one of them runs, so the people commands start fast.
 */
export function registerTokenCommands(program: Command, ctx: CliContext, state: TokenCommandsState): void {
  const { io } = ctx;
  const withTokens = async <T>(work: (tokens: TokenService) => Promise<T>): Promise<T> => {
    if (!state.database) {
      const { loadConfig } = await import('../config/env.js');
      const loaded = loadConfig(ctx.env);
      if (!loaded.ok) {
        io.stderr(`mq: ${loaded.message}`);
        throw new CliError('', 1);
      }
      const { openDatabase } = await import('../database.js');
      state.database = await openDatabase(loaded.config, { info: io.stderr, warn: io.stderr });
    }
    const { tokenService } = await import('../tokens/token-service.js');
    return work(tokenService(state.database.stores.tokens));
  };

  const token = program.command('token').description('Organization API tokens (x-api-token), on the database directly (admins)');

  token
    .command('create')
    .description('Mint a token for one organization; prints the token alone (shown only now)')
    .requiredOption('--host <host>', 'repository host, e.g. github.com')
    .requiredOption('--owner <owner>', 'organization or user that owns the repositories')
    .option('--name <name>', 'a label to recognise the token by')
    .action(async (opts: { host: string; owner: string; name?: string }) => {
      if (!HOST.test(opts.host) || opts.host.length > 253) {
        io.stderr('mq: --host must be a host name such as github.com');
        state.exitCode = 1;
        return;
      }
      if (!OWNER.test(opts.owner)) {
        io.stderr('mq: --owner must be an owner (organization) name without slashes or spaces');
        state.exitCode = 1;
        return;
      }
      const created = await withTokens((tokens) => tokens.create({ host: opts.host, owner: opts.owner, name: opts.name }));
      io.stdout(created.token);
      io.stderr(`Created token ${created.record.id} for ${created.record.host}/${created.record.owner}. Store it now: it is not shown again.`);
    });

  token
    .command('list')
    .description('List tokens (id, organization, prefix, created, status, name); secrets are never shown')
    .action(async () => {
      const all = await withTokens((tokens) => tokens.list());
      for (const t of all) io.stdout(tokenLine(t));
      if (all.length === 0) io.stderr('No tokens yet: create one with `mq token create --host H --owner O`.');
    });

  token
    .command('revoke')
    .description('Revoke a token by id; it stops working on the next request')
    .argument('<id>', 'the token id, as `mq token list` shows it')
    .action(async (id: string) => {
      const revoked = await withTokens((tokens) => tokens.revoke(id));
      if (!revoked) {
        io.stderr(`mq: no token has id ${id}.`);
        state.exitCode = 1;
        return;
      }
      io.stderr(`Revoked token ${id}.`);
    });
}
