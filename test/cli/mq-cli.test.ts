import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { buildServer } from '../../src/api/build-server.js';
import { runCli } from '../../src/cli/run-cli.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';

let database: TestDatabaseUri;
beforeAll(async () => {
  database = await createTestDatabaseUri('cli');
});
afterAll(async () => {
  await dropTestDatabase(database);
  await stopTestServer();
});

async function mq(...argv: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runCli(argv, { MONGODB_URI: database.uri }, { stdout: (l) => stdout.push(l), stderr: (l) => stderr.push(l) });
  return { code, stdout, stderr };
}

async function createQueueWith(token: string) {
  const stores = await openMongoStores({ uri: database.uri });
  const app = await buildServer({ stores, gitHosts: gitHostRegistry() });
  try {
    return await app.inject({
      method: 'POST',
      url: '/v1/createQueue',
      headers: { 'x-api-token': token, 'content-type': 'application/json' },
      payload: { repo: { host: 'github.com', owner: 'cli-org', name: 'r' }, targetBranch: `b-${Math.random()}` },
    });
  } finally {
    await app.close();
    await stores.close();
  }
}

describe('mq token', () => {
  test('create prints the token alone on one line, and the service accepts it until it is revoked', async () => {
    const created = await mq('token', 'create', '--host', 'github.com', '--owner', 'cli-org', '--name', 'ci');
    expect(created.code).toBe(0);
    expect(created.stdout).toHaveLength(1);
    const token = created.stdout[0] as string;
    expect(token).toMatch(/^mq_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr.join('\n')).not.toContain(token);

    expect((await createQueueWith(token)).statusCode).toBe(200);

    const listed = await mq('token', 'list');
    expect(listed.code).toBe(0);
    const row = listed.stdout.find((line) => line.includes('github.com/cli-org') && line.includes('\tci'));
    expect(row).toBeDefined();
    expect(listed.stdout.join('\n')).not.toContain(token);
    const id = (row as string).split('\t')[0] as string;
    expect(row).toContain('active');

    const revoked = await mq('token', 'revoke', id);
    expect(revoked.code).toBe(0);
    expect((await mq('token', 'list')).stdout.find((l) => l.startsWith(id))).toContain('revoked');
    const refused = await createQueueWith(token);
    expect(refused.statusCode).toBe(401);
  });

  test('revoke of an unknown id and bad options fail with exit code 1 and a message', async () => {
    const unknown = await mq('token', 'revoke', '0123456789abcdef01234567');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.join('\n')).toMatch(/^mq: no token has id/m);

    const garbage = await mq('token', 'revoke', 'not-an-id');
    expect(garbage.code).toBe(1);

    const badHost = await mq('token', 'create', '--host', 'not a host', '--owner', 'x');
    expect(badHost.code).toBe(1);
    expect(badHost.stdout).toEqual([]);
    expect(badHost.stderr.join('\n')).toMatch(/^mq: --host/m);

    const missingOwner = await mq('token', 'create', '--host', 'github.com');
    expect(missingOwner.code).toBe(1);
    expect(missingOwner.stderr.join('\n')).toMatch(/--owner/);
  });

  test('bad configuration is reported naming the variable, before touching a database', async () => {
    const stderr: string[] = [];
    const code = await runCli(['token', 'list'], { MONGODB_URI: 'http://nope' }, { stdout: () => {}, stderr: (l) => stderr.push(l) });
    expect(code).toBe(1);
    expect(stderr.join('\n')).toMatch(/MONGODB_URI/);
  });
});
