import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { findGo, findProjectRoot, type LocalDbLog } from '../../src/local-db/ferretdb-binary.js';
import { FerretDbStartError } from '../../src/local-db/ferretdb-process.js';
import { pingMongo } from '../../src/local-db/ping-mongo.js';
import {
  NoDatabaseError,
  resolveDatabase,
  type ResolveDatabaseDeps,
  type ResolvedDatabase,
} from '../../src/local-db/resolve-database.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, withDatabaseName } from '../support/test-database.js';

const quiet: LocalDbLog = { info: () => {}, warn: () => {} };
const base = { projectRoot: '/project', log: quiet };

/** Fakes that record calls; each option fails unless a test says otherwise. */
function fakes(overrides: Partial<ResolveDatabaseDeps> = {}) {
  const calls: string[] = [];
  const deps: ResolveDatabaseDeps = {
    pingMongo: async (uri, waitMs) => (calls.push(`ping ${uri} ${waitMs}`), false),
    ensureFerretDbBinary: async () => (
      calls.push('ensure'), { ok: false, reason: 'go-not-found', message: 'Go was not found' }
    ),
    startFerretDb: async (options) => {
      calls.push(`start ${options.address} ${options.dataDir}`);
      throw new FerretDbStartError('exited before it was ready', 'bind: address already in use');
    },
    startMemoryServer: async () => {
      calls.push('memory');
      throw new Error('Download failed for url "https://fastdl.mongodb.org/..."');
    },
  };
  // An overridden fake is recorded under its dependency's name.
  const record = ([name, fn]: [string, unknown]) => [
    name,
    (...args: unknown[]) => (calls.push(name), (fn as (...a: unknown[]) => unknown)(...args)),
  ];
  const recorded = Object.fromEntries(Object.entries(overrides).map(record)) as Partial<ResolveDatabaseDeps>;
  return { calls, deps: { ...deps, ...recorded } };
}

const goOk: Partial<ResolveDatabaseDeps> = {
  ensureFerretDbBinary: async () => ({ ok: true, path: '/bin/ferretdb-local', built: false }),
};

describe('resolveDatabase, option by option (fakes)', () => {
  it('1. uses MONGODB_URI as given and touches nothing else', async () => {
    const { calls, deps } = fakes();
    const db = await resolveDatabase({ ...base, mongodbUri: 'mongodb://db.example:27017/mq' }, deps);
    expect(db).toMatchObject({ uri: 'mongodb://db.example:27017/mq', source: 'env' });
    expect(calls).toEqual([]);
  });

  it('2a. reuses a server already answering on the fixed address, without needing Go', async () => {
    const { calls, deps } = fakes({ pingMongo: async () => true });
    const db = await resolveDatabase(base, deps);
    expect(db).toMatchObject({ uri: 'mongodb://127.0.0.1:27217/', source: 'ferretdb-shared' });
    expect(calls).toEqual(['pingMongo']);
    await db.stop(); // a no-op: the server belongs to another process
  });

  it('2b. otherwise starts FerretDB on the fixed address with the project data dir', async () => {
    let stopped = 0;
    const { calls, deps } = fakes({
      ...goOk,
      startFerretDb: async () => ({ uri: 'mongodb://127.0.0.1:27217/', pid: 1, stop: async () => void stopped++ }),
    });
    const db = await resolveDatabase(base, deps);
    expect(db).toMatchObject({ uri: 'mongodb://127.0.0.1:27217/', source: 'ferretdb' });
    expect(calls).toEqual(['ping mongodb://127.0.0.1:27217/ 0', 'ensureFerretDbBinary', 'startFerretDb']);
    await db.stop();
    expect(stopped).toBe(1);
  });

  it('2c. passes the overridden address and data dir through', async () => {
    const seen: unknown[] = [];
    const { deps } = fakes({
      ...goOk,
      startFerretDb: async (options) => {
        seen.push(options);
        return { uri: 'mongodb://127.0.0.1:3000/', pid: 1, stop: async () => {} };
      },
    });
    await resolveDatabase({ ...base, ferretDbAddress: '127.0.0.1:3000', dataDir: '/data' }, deps);
    expect(seen).toEqual([
      expect.objectContaining({ binaryPath: '/bin/ferretdb-local', address: '127.0.0.1:3000', dataDir: '/data' }),
    ]);
  });

  it('2d. shares the server of a process that won a start race', async () => {
    let pings = 0;
    const { calls, deps } = fakes({ ...goOk, pingMongo: async () => pings++ > 0 });
    const db = await resolveDatabase(base, deps);
    expect(db.source).toBe('ferretdb-shared');
    expect(calls).toEqual([
      'pingMongo',
      'ensureFerretDbBinary',
      'start 127.0.0.1:27217 /project/.data/ferretdb',
      'pingMongo',
    ]);
  });

  it('2e. never probes for sharing on port 0 (tests)', async () => {
    const { calls, deps } = fakes({
      ...goOk,
      startFerretDb: async () => ({ uri: 'mongodb://127.0.0.1:4444/', pid: 1, stop: async () => {} }),
    });
    const db = await resolveDatabase({ ...base, ferretDbAddress: '127.0.0.1:0' }, deps);
    expect(db.source).toBe('ferretdb');
    expect(calls.some((c) => c.startsWith('ping'))).toBe(false);
  });

  it('3. falls back to mongodb-memory-server without Go', async () => {
    const { calls, deps } = fakes({
      startMemoryServer: async () => ({ uri: 'mongodb://127.0.0.1:5555/', stop: async () => {} }),
    });
    const db = await resolveDatabase(base, deps);
    expect(db).toMatchObject({ uri: 'mongodb://127.0.0.1:5555/', source: 'memory-server' });
    expect(calls).toEqual(['ping mongodb://127.0.0.1:27217/ 0', 'ensure', 'startMemoryServer']);
  });

  it('3b. falls back to mongodb-memory-server when FerretDB fails to build or start', async () => {
    const warnings: string[] = [];
    const { deps } = fakes({
      ensureFerretDbBinary: async () => {
        throw new Error('Building the local FerretDB server failed: proxy.golang.org unreachable');
      },
      startMemoryServer: async () => ({ uri: 'mongodb://127.0.0.1:5555/', stop: async () => {} }),
    });
    const db = await resolveDatabase({ ...base, log: { info: () => {}, warn: (m) => warnings.push(m) } }, deps);
    expect(db.source).toBe('memory-server');
    expect(warnings.join('\n')).toMatch(/proxy\.golang\.org unreachable/);
  });

  it('4. fails with one error naming the three options and what was tried', async () => {
    const { deps } = fakes(goOk);
    const error: unknown = await resolveDatabase(base, deps).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoDatabaseError);
    const { message, attempts } = error as NoDatabaseError;
    expect(message).toMatch(/MONGODB_URI/);
    expect(message).toMatch(/install Go/);
    expect(message).toMatch(/internet access.*mongodb-memory-server/);
    expect(attempts).toEqual([
      'FerretDB: exited before it was ready: bind: address already in use',
      'mongodb-memory-server: Download failed for url "https://fastdl.mongodb.org/..."',
    ]);
  });
});

const go = await findGo();
const itWithGo = go ? it : it.skip;
const projectRoot = await findProjectRoot();

/** A port free right now, for the fixed-address (sharing) tests. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('resolveDatabase with the real FerretDB', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function resolveReal(address: string, dataDir: string): Promise<ResolvedDatabase> {
    const db = await resolveDatabase({ projectRoot, ferretDbAddress: address, dataDir, log: quiet });
    cleanups.push(() => db.stop());
    return db;
  }
  async function tempDir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'mq-resolve-db-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    return dir;
  }

  itWithGo('starts on a free port, stores and finds a document, and stops', async () => {
    const db = await resolveReal('127.0.0.1:0', await tempDir());
    expect(db.source).toBe('ferretdb');
    const client = new MongoClient(db.uri, { serverSelectionTimeoutMS: 5_000 });
    try {
      const things = client.db('resolve_test').collection<{ _id: string; n: number }>('things');
      await things.insertOne({ _id: 'a', n: 1 });
      expect(await things.findOne({ _id: 'a' })).toEqual({ _id: 'a', n: 1 });
    } finally {
      await client.close();
    }
    await db.stop();
    expect(await pingMongo(db.uri, 0)).toBe(false);
  }, 120_000);

  itWithGo('lets a second resolver (CLI and service) share the server on the fixed address', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const dataDir = await tempDir();
    const [a, b] = await Promise.all([resolveReal(address, dataDir), resolveReal(address, dataDir)]);
    expect([a.source, b.source].sort()).toEqual(['ferretdb', 'ferretdb-shared']);
    const c = await resolveReal(address, dataDir);
    expect(c).toMatchObject({ source: 'ferretdb-shared', uri: `mongodb://${address}/` });
  }, 120_000);
});

describe('the jest test database (test/support)', () => {
  afterAll(() => stopTestServer());
  it('gives each caller its own database on the global server, and drops it', async () => {
    const one = await createTestDatabaseUri('resolve-database.test');
    const two = await createTestDatabaseUri('resolve-database.test');
    expect(one.dbName).not.toBe(two.dbName);
    expect(one.dbName).toMatch(/^[a-zA-Z0-9_-]{1,63}$/);
    const client = new MongoClient(one.uri, { serverSelectionTimeoutMS: 5_000 });
    try {
      await client.db().collection('c').insertOne({ x: 1 });
      expect(client.db().databaseName).toBe(one.dbName);
      await dropTestDatabase(one);
      const names = (await client.db().admin().listDatabases()).databases.map((d) => d.name);
      expect(names).not.toContain(one.dbName);
    } finally {
      await client.close();
    }
  });

  it.each([
    ['mongodb://127.0.0.1:1234/', 'mongodb://127.0.0.1:1234/t1'],
    ['mongodb://127.0.0.1:1234', 'mongodb://127.0.0.1:1234/t1'],
    ['mongodb://a:1,b:2/prod?replicaSet=rs0', 'mongodb://a:1,b:2/t1?replicaSet=rs0'],
    ['mongodb://u:p@h/admin2', 'mongodb://u:p@h/t1?authSource=admin2'],
    [
      'mongodb+srv://u:p@c.example/app?authSource=admin&w=majority',
      'mongodb+srv://u:p@c.example/t1?authSource=admin&w=majority',
    ],
  ])('withDatabaseName(%s)', (uri, expected) => {
    expect(withDatabaseName(uri, 't1')).toBe(expected);
  });
});
