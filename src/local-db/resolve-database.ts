import { join } from 'node:path';
import {
  ensureFerretDbBinary,
  stderrLog,
  type EnsureFerretDbBinaryOptions,
  type FerretDbBinaryResult,
  type LocalDbLog,
} from './ferretdb-binary.js';
import {
  FerretDbStartError,
  startFerretDb,
  type FerretDbProcess,
  type StartFerretDbOptions,
} from './ferretdb-process.js';
import { pingMongo } from './ping-mongo.js';

/** Where the database came from, in the order of shared/LOCAL-DB.md. */
export type DatabaseSource = 'env' | 'ferretdb' | 'ferretdb-shared' | 'memory-server';

/** A usable MongoDB-protocol server. `stop()` ends what we started; a no-op for env and shared servers. */
export interface ResolvedDatabase {
  uri: string;
  source: DatabaseSource;
  /** The server's process id, when this process started it (benchmarks read its CPU time). */
  pid?: number;
  stop(): Promise<void>;
}

export interface ResolveDatabaseOptions {
  /** MONGODB_URI, when set: used as is. */
  mongodbUri?: string | undefined;
  projectRoot: string;
  /**
   * Fixed so the service and the CLI find each other's server (and data).
   * Port 0 picks a free port and disables sharing (tests).
   */
  ferretDbAddress?: string;
  /** Defaults to `<projectRoot>/.data/ferretdb`. */
  dataDir?: string;
  log?: LocalDbLog;
}

/** The side effects of resolution, injectable so the order can be tested with fakes. */
export interface ResolveDatabaseDeps {
  /** True when a MongoDB-protocol server answers `ping`; waits up to waitMs for one to come up. */
  pingMongo(uri: string, waitMs: number): Promise<boolean>;
  ensureFerretDbBinary(options: EnsureFerretDbBinaryOptions): Promise<FerretDbBinaryResult>;
  startFerretDb(options: StartFerretDbOptions): Promise<FerretDbProcess>;
  startMemoryServer(): Promise<{ uri: string; stop(): Promise<void> }>;
}

/** Not MongoDB's 27017, so a developer's own mongod is never mistaken for ours. */
export const DEFAULT_FERRETDB_ADDRESS = '127.0.0.1:27217';

/** No option worked; `attempts` says why each one failed. */
export class NoDatabaseError extends Error {
  override name = 'NoDatabaseError';
  constructor(readonly attempts: readonly string[]) {
    super(
      [
        'No MongoDB-compatible database is available. Pick one of:',
        '  1. set MONGODB_URI to a MongoDB server (e.g. mongodb://127.0.0.1:27017/mergequeue);',
        '  2. install Go (https://go.dev/dl/, on PATH or in /usr/local/go/bin) so the local FerretDB',
        '     server can be built;',
        '  3. run on a machine with internet access, where mongodb-memory-server downloads a mongod.',
        ...(attempts.length > 0 ? ['What was tried:', ...attempts.map((a) => `  - ${a}`)] : []),
      ].join('\n'),
    );
  }
}

export const defaultResolveDatabaseDeps: ResolveDatabaseDeps = {
  pingMongo,
  ensureFerretDbBinary,
  startFerretDb,
  startMemoryServer,
};

/**
 * Picks the database as shared/LOCAL-DB.md orders it: MONGODB_URI, else the local
 * FerretDB (reusing one another process already runs on the fixed address), else
 * mongodb-memory-server, else a NoDatabaseError naming the three ways out.
 */
export async function resolveDatabase(
  options: ResolveDatabaseOptions,
  deps: ResolveDatabaseDeps = defaultResolveDatabaseDeps,
): Promise<ResolvedDatabase> {
  const noop = async () => {};
  if (options.mongodbUri) return { uri: options.mongodbUri, source: 'env', stop: noop };

  const { projectRoot, log = stderrLog } = options;
  const address = options.ferretDbAddress ?? DEFAULT_FERRETDB_ADDRESS;
  const sharedUri = `mongodb://${address}/`;
  const shareable = !/:0$/.test(address);
  const shared = (): ResolvedDatabase => {
    log.info(`Using the local FerretDB server already running at ${sharedUri}`);
    return { uri: sharedUri, source: 'ferretdb-shared', stop: noop };
  };
  const attempts: string[] = [];

  // Another process (service or CLI) may already serve this data directory:
  // a second server on the same SQLite files must not be started.
  if (shareable && (await deps.pingMongo(sharedUri, 0))) return shared();

  try {
    const binary = await deps.ensureFerretDbBinary({ projectRoot, log });
    if (!binary.ok) {
      attempts.push(`FerretDB: ${binary.message}`);
    } else {
      const dataDir = options.dataDir ?? join(projectRoot, '.data', 'ferretdb');
      try {
        const server = await deps.startFerretDb({ binaryPath: binary.path, address, dataDir, log });
        log.info(`Started the local FerretDB server at ${server.uri} (data in ${dataDir})`);
        return { uri: server.uri, source: 'ferretdb', pid: server.pid, stop: server.stop };
      } catch (error) {
        // Lost a start race with another process: its server now holds the port.
        if (shareable && (await deps.pingMongo(sharedUri, 5_000))) return shared();
        throw error;
      }
    }
  } catch (error) {
    attempts.push(`FerretDB: ${firstLines(error)}`);
    log.warn(`The local FerretDB server is not available: ${errorMessage(error)}`);
  }

  try {
    log.info('Trying mongodb-memory-server (downloads a mongod on first use)…');
    const server = await deps.startMemoryServer();
    return { uri: server.uri, source: 'memory-server', stop: server.stop };
  } catch (error) {
    attempts.push(`mongodb-memory-server: ${firstLines(error)}`);
  }
  throw new NoDatabaseError(attempts);
}

async function startMemoryServer(): Promise<{ uri: string; stop(): Promise<void> }> {
  // Loaded lazily: only machines without MONGODB_URI and Go get this far.
  const { MongoMemoryServer } = await import('mongodb-memory-server-core');
  const server = await MongoMemoryServer.create();
  return {
    uri: server.getUri(),
    stop: async () => {
      await server.stop();
    },
  };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Enough of an error for a one-screen summary; memory-server errors embed whole stacks. */
function firstLines(error: unknown): string {
  if (error instanceof FerretDbStartError) {
    // Its last stderr line is the cause, e.g. "bind: address already in use".
    const cause = error.stderrTail.split('\n').at(-1) ?? '';
    return `${errorMessage(error).split('\n')[0]}${cause ? `: ${cause}` : ''}`.slice(0, 400);
  }
  return errorMessage(error).split('\n').slice(0, 3).join(' ').slice(0, 400);
}
