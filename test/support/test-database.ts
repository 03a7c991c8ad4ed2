import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { resolveDatabase } from '../../src/local-db/resolve-database.js';

/** A database of its own for one test file: parallel jest workers never share data. */
export interface TestDatabaseUri {
  /** The test server's URI with `dbName` as its path; hand it to mongoose or the driver. */
  uri: string;
  dbName: string;
}

/**
 * The test server: MONGODB_URI when set, else a FerretDB of this test file's
 * own on a free port and a temp data dir. Started per file rather than in
 * jest's globalSetup because, in ESM mode, globalSetup is loaded by Node
 * itself and cannot import our TypeScript sources.
 */
let server: Promise<{ uri: string; stop(): Promise<void> }> | undefined;

export function testServer(): Promise<{ uri: string; stop(): Promise<void> }> {
  server ??= (async () => {
    if (process.env.MONGODB_URI) return { uri: process.env.MONGODB_URI, stop: async () => {} };
    const dataDir = await mkdtemp(join(tmpdir(), 'mq-test-ferretdb-'));
    const database = await resolveDatabase({ projectRoot: process.cwd(), ferretDbAddress: '127.0.0.1:0', dataDir });
    return {
      uri: database.uri,
      async stop() {
        await database.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  })();
  return server;
}

/** Stops this file's test server (afterAll of the last user in the file). */
export async function stopTestServer(): Promise<void> {
  const running = server;
  server = undefined;
  if (running) await (await running).stop();
}

/** A fresh, unique database name on the test server; FerretDB allows [a-zA-Z0-9_-]{1,63}. */
export async function createTestDatabaseUri(prefix = 'test'): Promise<TestDatabaseUri> {
  const safePrefix = prefix.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 30) || 'test';
  const worker = process.env.JEST_WORKER_ID ?? '0';
  const dbName = `${safePrefix}_w${worker}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  return { uri: withDatabaseName((await testServer()).uri, dbName), dbName };
}

/** Drops the test file's database; call it in afterAll. */
export async function dropTestDatabase(database: TestDatabaseUri): Promise<void> {
  const client = new MongoClient(database.uri, { serverSelectionTimeoutMS: 5_000 });
  try {
    await client.db(database.dbName).dropDatabase();
  } finally {
    await client.close();
  }
}

/**
 * Puts dbName in the URI's path, keeping hosts and options. The path database is
 * also the default auth database, so a credentialed URI keeps it as authSource.
 */
export function withDatabaseName(baseUri: string, dbName: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/)([^/?]*)(\/[^?]*)?(\?.*)?$/.exec(baseUri);
  if (!match) throw new Error(`Not a MongoDB URI: ${baseUri.replace(/\/\/[^@/]*@/, '//***@')}`);
  const [, scheme, authority = '', path = '', query = ''] = match;
  const params = new URLSearchParams(query.slice(1));
  const oldDb = decodeURIComponent(path.slice(1));
  if (authority.includes('@') && oldDb && !params.has('authSource')) params.set('authSource', oldDb);
  const search = params.toString();
  return `${scheme}${authority}/${dbName}${search ? `?${search}` : ''}`;
}
