import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { access, constants, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Where log lines of the local database go; a pino logger fits. */
export interface LocalDbLog {
  info(message: string): void;
  warn(message: string): void;
}

/** Default log for CLIs and tests without a logger: stderr keeps stdout clean for command output. */
export const stderrLog: LocalDbLog = {
  info: (message) => process.stderr.write(`${message}\n`),
  warn: (message) => process.stderr.write(`${message}\n`),
};

/** The outcome of making sure the FerretDB wrapper is built: a binary, or no Go to build it with. */
export type FerretDbBinaryResult =
  | { ok: true; path: string; built: boolean }
  | { ok: false; reason: 'go-not-found'; message: string };

export interface EnsureFerretDbBinaryOptions {
  projectRoot: string;
  log?: LocalDbLog;
  /** Injected by tests; defaults to a search of PATH and /usr/local/go/bin. */
  findGo?: () => Promise<string | null>;
}

const SOURCES = ['main.go', 'id_index.go', 'go.mod', 'go.sum'] as const;

/** The Go wrapper's folder inside the project. */
export function ferretDbSourceDir(projectRoot: string): string {
  return join(projectRoot, 'tools', 'ferretdb');
}

/** The cached binary; `.data/` is git-ignored and shared by the service, the CLI and tests. */
export function ferretDbBinaryPath(projectRoot: string): string {
  return join(projectRoot, '.data', 'bin', 'ferretdb-local');
}

/**
 * The project root, found by walking up from this module to the folder holding
 * tools/ferretdb/go.mod, so it works from src/ (tests, tsx) and from dist/ alike.
 */
export async function findProjectRoot(startDir = dirname(fileURLToPath(import.meta.url))): Promise<string> {
  for (let dir = startDir; ; dir = dirname(dir)) {
    if (await isReadable(join(ferretDbSourceDir(dir), 'go.mod'))) return dir;
    if (dirname(dir) === dir) {
      throw new Error(`No tools/ferretdb/go.mod above ${startDir}: cannot find the project root`);
    }
  }
}

/** The `go` command: PATH first, then the default tarball install, which is often not on PATH. */
export async function findGo(): Promise<string | null> {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const dir of [...dirs, '/usr/local/go/bin']) {
    const candidate = join(dir, 'go');
    // ~/go is usually GOPATH, a directory: only an executable file counts.
    if ((await isExecutable(candidate)) && (await stat(candidate)).isFile()) return candidate;
  }
  return null;
}

/**
 * Returns the wrapper binary, building it only when its sources changed since the
 * last build (a hash file sits next to the binary). Builds go to a unique temp
 * file renamed into place, so concurrent builders (jest workers, CLI + service)
 * never expose a half-written binary; the last rename wins and all are identical.
 */
export async function ensureFerretDbBinary(options: EnsureFerretDbBinaryOptions): Promise<FerretDbBinaryResult> {
  const { projectRoot, log = stderrLog } = options;
  const binary = ferretDbBinaryPath(projectRoot);
  const hashFile = `${binary}.sha256`;
  const hash = await sourceHash(projectRoot);

  const cachedHash = await readFile(hashFile, 'utf8').catch(() => null);
  if (cachedHash?.trim() === hash && (await isExecutable(binary))) return { ok: true, path: binary, built: false };

  const go = await (options.findGo ?? findGo)();
  if (go === null) {
    return {
      ok: false,
      reason: 'go-not-found',
      message: 'Go was not found on PATH nor in /usr/local/go/bin, so the local FerretDB server cannot be built',
    };
  }

  log.info('Building the local FerretDB server (first run only, about a minute)…');
  await mkdir(dirname(binary), { recursive: true });
  const suffix = `${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  const tmpBinary = `${binary}.${suffix}`;
  const tmpHash = `${hashFile}.${suffix}`;
  try {
    await execFileAsync(go, ['build', '-o', tmpBinary, '.'], {
      cwd: ferretDbSourceDir(projectRoot),
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stderr?: string; message: string }) => {
      const tail = (error.stderr ?? '').trim().split('\n').slice(-20).join('\n');
      throw new Error(`Building the local FerretDB server failed: ${error.message}\n${tail}`);
    });
    await writeFile(tmpHash, `${hash}\n`);
    // Binary first: a reader seeing the new hash must also see the new binary.
    await rename(tmpBinary, binary);
    await rename(tmpHash, hashFile);
  } finally {
    await rm(tmpBinary, { force: true });
    await rm(tmpHash, { force: true });
  }
  log.info(`Built the local FerretDB server: ${binary}`);
  return { ok: true, path: binary, built: true };
}

/** Hash of the wrapper's sources and the platform, the binary's cache key. */
async function sourceHash(projectRoot: string): Promise<string> {
  const hash = createHash('sha256').update(`${process.platform}-${process.arch}\0`);
  for (const name of SOURCES) {
    hash.update(`${name}\0`).update(await readFile(join(ferretDbSourceDir(projectRoot), name))).update('\0');
  }
  return hash.digest('hex');
}

async function isExecutable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

async function isReadable(path: string): Promise<boolean> {
  return access(path, constants.R_OK).then(
    () => true,
    () => false,
  );
}
