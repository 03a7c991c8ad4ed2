/**
 * The real service and CLI as processes (`npm test` builds dist/ first): what a
 * user of `npm start` and `mq` sees, including the local FerretDB they share.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer } from '../support/test-database.js';

const root = process.cwd();
const mainJs = join(root, 'dist', 'main.js');
const cliJs = join(root, 'dist', 'cli', 'main.js');

beforeAll(() => {
  if (!existsSync(mainJs)) throw new Error('dist/ is missing: run `npm run build` (npm test does) before these tests');
});
afterAll(() => stopTestServer());

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function run(script: string, args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [script, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, cwd: root });
  let output = '';
  child.stdout?.on('data', (d) => (output += String(d)));
  child.stderr?.on('data', (d) => (output += String(d)));
  // 'close', not 'exit': at exit the output may not all be read yet (tests read it once the process ended).
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => output, exit };
}

async function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, [cliJs, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, cwd: root });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.resume();
  // 'close', not 'exit': at exit the output may not all be read yet.
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout };
}

async function waitForHealth(port: number, service: { output: () => string }, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`service did not come up:\n${service.output()}`);
}

async function createQueue(port: number, token: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/v1/createQueue`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-token': token },
    body: JSON.stringify({ repo: { host: 'github.com', owner: 'e2e', name: 'r' }, targetBranch: `main-${Date.now()}` }),
  });
  return response.status;
}

test('with the GitHub App variables it serves the webhook route and says so; without them it says that too', async () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const database = await createTestDatabaseUri('e2e-gh');
  const port = await freePort();
  // The PEM on one line with literal \n, as environments often carry it.
  const env = { MONGODB_URI: database.uri, PORT: String(port), APP_ID: '12345', PRIVATE_KEY: privateKey.replace(/\n/g, '\\n'), WEBHOOK_SECRET: 'secret' };
  const service = run(mainJs, [], env);
  try {
    await waitForHealth(port, service);
    expect(service.output()).toMatch(/GitHub App configured/);
    const unsigned = await fetch(`http://127.0.0.1:${port}/api/github/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': 'd1' },
      body: '{}',
    });
    expect(unsigned.status).toBe(401);
  } finally {
    service.child.kill('SIGTERM');
  }
  expect(await service.exit).toBe(0);
  await dropTestDatabase(database);

  const plain = run(mainJs, [], { MONGODB_URI: database.uri, PORT: String(await freePort()) });
  const deadline = Date.now() + 30_000;
  while (!/GitHub App not configured/.test(plain.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  plain.child.kill('SIGTERM');
  expect(plain.output()).toMatch(/GitHub App not configured/);
  await plain.exit;
}, 90_000);

test('bad configuration exits 1 with a message naming the variable', async () => {
  const service = run(mainJs, [], { PORT: 'not-a-port' });
  expect(await service.exit).toBe(1);
  expect(service.output()).toMatch(/PORT/);
});

test('with MONGODB_URI: serves, accepts a CLI-minted token, and stops cleanly on SIGTERM', async () => {
  const database = await createTestDatabaseUri('e2e');
  const port = await freePort();
  const env = { MONGODB_URI: database.uri, PORT: String(port), LOG_LEVEL: 'warn' };
  const service = run(mainJs, [], env);
  try {
    await waitForHealth(port, service);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    const minted = await cli(['token', 'create', '--host', 'github.com', '--owner', 'e2e'], env);
    expect(minted.code).toBe(0);
    expect(await createQueue(port, minted.stdout.trim())).toBe(200);
    expect(await createQueue(port, 'mq_wrong')).toBe(401);
  } finally {
    service.child.kill('SIGTERM');
  }
  expect(await service.exit).toBe(0);
  await dropTestDatabase(database);
}, 90_000);

test('without MONGODB_URI: the service starts the local FerretDB and the CLI shares it', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mq-e2e-data-'));
  const port = await freePort();
  const dbPort = await freePort();
  const env = { PORT: String(port), MQ_LOCAL_DB_PORT: String(dbPort), MQ_DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  const service = run(mainJs, [], env);
  try {
    await waitForHealth(port, service);
    expect(service.output()).toMatch(/Started the local FerretDB server/);
    expect(await acceptsConnections(dbPort)).toBe(true);
    const minted = await cli(['token', 'create', '--host', 'github.com', '--owner', 'e2e'], env);
    expect(minted.code).toBe(0);
    expect(await createQueue(port, minted.stdout.trim())).toBe(200);
  } finally {
    service.child.kill('SIGTERM');
  }
  expect(await service.exit).toBe(0);
  // The service's FerretDB went with it: nothing answers on its port any more.
  expect(await acceptsConnections(dbPort)).toBe(false);
  await rm(dataDir, { recursive: true, force: true });
}, 120_000);
