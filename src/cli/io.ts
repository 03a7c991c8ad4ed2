import type { Env } from './credentials.js';

/** Where the CLI writes: stdout carries only results (a token, a table, JSON), stderr the rest. */
export interface CliIo {
  stdout(line: string): void;
  stderr(line: string): void;
  /** Reads a secret typed at a prompt (not echoed) or piped in; absent when there is no terminal or pipe to read. */
  readSecret?(prompt: string): Promise<string>;
}

/** What every command gets: the environment it reads settings from and where it writes. */
export interface CliContext {
  env: Env;
  io: CliIo;
}
