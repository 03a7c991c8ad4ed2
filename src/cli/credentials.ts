import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError, EXIT } from './cli-error.js';

/** Where `mq login` keeps tokens: one per base URL, and the URL signed in to last. */
export interface Credentials {
  defaultUrl?: string;
  servers: Record<string, { token: string; savedAt: string }>;
}

export type Env = Record<string, string | undefined>;

/** `MQ_CONFIG_DIR`, else `$XDG_CONFIG_HOME/merge-queue`, else `~/.config/merge-queue` (`%APPDATA%\merge-queue` on Windows). */
export function configDir(env: Env): string {
  if (env.MQ_CONFIG_DIR) return env.MQ_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'merge-queue');
  if (process.platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'merge-queue');
  return join(env.HOME || homedir(), '.config', 'merge-queue');
}

export function credentialsPath(env: Env): string {
  return join(configDir(env), 'credentials.json');
}

export async function readCredentials(env: Env): Promise<Credentials> {
  const path = credentialsPath(env);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { servers: {} };
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`, EXIT.usage);
  }
  try {
    const parsed = JSON.parse(text) as Partial<Credentials>;
    const servers: Credentials['servers'] = {};
    for (const [url, saved] of Object.entries(parsed.servers ?? {})) {
      if (saved && typeof saved.token === 'string') servers[url] = { token: saved.token, savedAt: String(saved.savedAt ?? '') };
    }
    return { ...(typeof parsed.defaultUrl === 'string' ? { defaultUrl: parsed.defaultUrl } : {}), servers };
  } catch {
    throw new CliError(`${path} is not valid JSON: remove it and sign in again with \`mq login\``, EXIT.usage);
  }
}

/**
 * Saves the credentials readable by the user alone (directory 0700, file 0600),
 * written to a temporary file and renamed so a crash never leaves half a file.
 * Without any server left, the file is removed.
 */
export async function writeCredentials(env: Env, credentials: Credentials): Promise<void> {
  const dir = configDir(env);
  const path = credentialsPath(env);
  if (Object.keys(credentials.servers).length === 0) {
    await rm(path, { force: true });
    return;
  }
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    // Only a directory made here is set to 0700: an existing one (MQ_CONFIG_DIR=., ~/.config) keeps its mode (found by
    // review); the file itself is 0600 either way.
    const made = await mkdir(dir, { recursive: true, mode: 0o700 });
    if (made !== undefined) await chmod(dir, 0o700);
    await writeFile(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'w' });
    await chmod(temporary, 0o600);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new CliError(`cannot write ${path}: ${(error as Error).message}`, EXIT.usage);
  }
}
