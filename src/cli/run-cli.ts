import { Command, CommanderError } from 'commander';
import { z } from 'zod';
import { loadConfig } from '../config/env.js';
import { openDatabase, type OpenDatabase } from '../database.js';
import type { ApiTokenRecord } from '../domain/records.js';
import { tokenService } from '../tokens/token-service.js';

/** Where the CLI writes: stdout carries only results (a token, a table), stderr the rest. */
export interface CliIo {
  stdout(line: string): void;
  stderr(line: string): void;
}

const hostSchema = z.string().regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be a host name such as github.com');
const ownerSchema = z.string().regex(/^[^\s/]{1,100}$/, 'must be an owner (organization) name without slashes or spaces');

function tokenLine(t: ApiTokenRecord): string {
  const status = t.revokedAt ? `revoked ${t.revokedAt.toISOString()}` : 'active';
  return [t.id, `${t.host}/${t.owner}`, t.prefix + '…', t.createdAt.toISOString(), status, t.name].join('\t');
}

/**
 * `mq token create|list|revoke`. Returns the exit code instead of exiting, so
 * tests run it in-process against their own database.
 */
export async function runCli(argv: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  const loaded = loadConfig(env);
  if (!loaded.ok) {
    io.stderr(loaded.message);
    return 1;
  }
  const config = loaded.config;
  let database: OpenDatabase | undefined;
  const withTokens = async <T>(work: (tokens: ReturnType<typeof tokenService>) => Promise<T>): Promise<T> => {
    database ??= await openDatabase(config, { info: io.stderr, warn: io.stderr });
    return work(tokenService(database.stores.tokens));
  };
  let exitCode = 0;

  const program = new Command('mq')
    .description('Merge queue administration')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s.trimEnd()), writeErr: (s) => io.stderr(s.trimEnd()) });
  const token = program.command('token').description('Organization API tokens (x-api-token)');

  token
    .command('create')
    .description('Mint a token for one organization; prints the token alone (shown only now)')
    .requiredOption('--host <host>', 'repository host, e.g. github.com')
    .requiredOption('--owner <owner>', 'organization or user that owns the repositories')
    .option('--name <name>', 'a label to recognise the token by')
    .action(async (opts: { host: string; owner: string; name?: string }) => {
      const host = hostSchema.safeParse(opts.host);
      const owner = ownerSchema.safeParse(opts.owner);
      if (!host.success || !owner.success) {
        io.stderr(!host.success ? `--host ${host.error.issues[0]?.message}` : `--owner ${owner.error?.issues[0]?.message}`);
        exitCode = 1;
        return;
      }
      const created = await withTokens((tokens) => tokens.create({ host: host.data, owner: owner.data, name: opts.name }));
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
        io.stderr(`No token has id ${id}.`);
        exitCode = 1;
        return;
      }
      io.stderr(`Revoked token ${id}.`);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) exitCode = error.exitCode;
    else {
      io.stderr(error instanceof Error ? error.message : String(error));
      exitCode = 1;
    }
  } finally {
    await database?.close();
  }
  return exitCode;
}
