/**
 * Starts ONE throw-away database for the whole jest run and hands its URI to the
 * workers through MQ_TEST_MONGODB_URI (workers are forked after this runs, so
 * they inherit process.env). Each test file then takes its own database name
 * (test/support/test-database.ts).
 */
import { mkdtemp } from 'node:fs/promises';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResolvedDatabase } from '../../src/local-db/resolve-database.js';

/** What global-teardown.ts must clean up; kept on globalThis, which both share. */
export interface TestDatabaseHandle {
  database: ResolvedDatabase;
  dataDir: string;
}

export default async function globalSetup(_globalConfig: unknown, projectConfig: { rootDir: string }): Promise<void> {
  const { resolveDatabase } = await importSource(() => import('../../src/local-db/resolve-database.js'));
  // Port 0 and a temp dir: never the developer's local database, never a port clash.
  const dataDir = await mkdtemp(join(tmpdir(), 'mq-test-ferretdb-'));
  const database = await resolveDatabase({
    mongodbUri: process.env.MONGODB_URI,
    projectRoot: projectConfig.rootDir,
    ferretDbAddress: '127.0.0.1:0',
    dataDir,
  });
  const handle: TestDatabaseHandle = { database, dataDir };
  (globalThis as Record<symbol, unknown>)[Symbol.for('merge-queue.test-database')] = handle;
  process.env.MQ_TEST_MONGODB_URI = database.uri;
}

/**
 * Jest loads global hooks as CommonJS through Node's own resolver, where neither
 * ESM nor the config's moduleNameMapper applies, so `./x.js` must be mapped to
 * `./x.ts` by hand while our sources load.
 */
async function importSource<T>(load: () => Promise<T>): Promise<T> {
  const loader = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const original = loader._resolveFilename;
  loader._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
    try {
      return original.call(this, request, ...rest);
    } catch (error) {
      if (!/^\.{1,2}\/.*\.js$/.test(request)) throw error;
      return original.call(this, request.replace(/\.js$/, '.ts'), ...rest);
    }
  };
  try {
    return await load();
  } finally {
    loader._resolveFilename = original;
  }
}
