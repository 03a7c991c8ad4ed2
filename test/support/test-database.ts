import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';

/** A database of its own for one test file: parallel jest workers never share data. */
export interface TestDatabaseUri {
  /** The test server's URI with `dbName` as its path; hand it to mongoose or the driver. */
  uri: string;
  dbName: string;
}

/** The server started by test/support/global-setup.ts, without a database name. */
export function testServerUri(): string {
  const uri = process.env.MQ_TEST_MONGODB_URI;
  if (!uri) {
    throw new Error('MQ_TEST_MONGODB_URI is not set: run the tests through jest (its globalSetup starts the database)');
  }
  return uri;
}

/** A fresh, unique database name on the test server; FerretDB allows [a-zA-Z0-9_-]{1,63}. */
export function createTestDatabaseUri(prefix = 'test'): TestDatabaseUri {
  const safePrefix = prefix.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 30) || 'test';
  const worker = process.env.JEST_WORKER_ID ?? '0';
  const dbName = `${safePrefix}_w${worker}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  return { uri: withDatabaseName(testServerUri(), dbName), dbName };
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
