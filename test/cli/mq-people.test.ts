/**
 * `mq` for people against the BUILT service, both as processes (`npm test`
 * builds dist/ first): what someone typing `mq status` sees, what a script
 * reading `--json` and exit codes gets, with a wrong token and a server down.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';

const root = process.cwd();
const mainJs = join(root, 'dist', 'main.js');
const cliJs = join(root, 'dist', 'cli', 'main.js');
const OWNER = 'people';
const REPO = `sandbox/${OWNER}/app`;

let database: TestDatabaseUri;
let service: { child: ChildProcess; output: () => string; exit: Promise<number | null> } | undefined;
let url: string;
let token: string;
let scratch: string;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node dist/cli/main.js ...args` with only the environment given (plus PATH and a scratch HOME). */
function mqWith(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const child = spawn(process.execPath, [cliJs, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: join(scratch, 'home'), MQ_NO_BUILD_CHECK: '1', ...env },
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** `mq queues` against a server that answers every request with `raw` (an HTTP answer as bytes). */
async function againstServerAnswering(raw: string): Promise<Run> {
  const server = createServer();
  const port = await new Promise<number>((resolve) => server.on('connection', (socket) => socket.end(raw)).listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  try {
    return await mqWith({ MQ_URL: `http://127.0.0.1:${port}`, MQ_TOKEN: token, MQ_CONFIG_DIR: join(scratch, 'unused-config') }, 'queues');
  } finally {
    server.close();
  }
}

/** Signed in by the environment, on the test queue. */
const mq = (...args: string[]) => mqWith({ MQ_URL: url, MQ_TOKEN: token, MQ_REPO: REPO, MQ_CONFIG_DIR: join(scratch, 'unused-config') }, ...args);

/** A failure as scripts and people see it: the exit code, nothing on stdout, one "mq: " line on stderr. */
function expectFailure(run: Run, code: number, pattern: RegExp): void {
  expect({ code: run.code, stdout: run.stdout }).toEqual({ code, stdout: '' });
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^mq: /);
  expect(lines[0]).toMatch(pattern);
}

function expectOk(run: Run): string[] {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  return run.stdout.trimEnd().split('\n');
}

async function post(path: string, body: object): Promise<Response> {
  return fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-token': token }, body: JSON.stringify(body) });
}

beforeAll(async () => {
  if (!existsSync(mainJs) || !existsSync(join(root, 'dist', 'cli', 'http-client.js'))) {
    throw new Error('dist/ is missing or older than `mq` for people: run `npm run build` (npm test does) before these tests');
  }
  scratch = await mkdtemp(join(tmpdir(), 'mq-people-'));
  database = await createTestDatabaseUri('mq-people');
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', MONGODB_URI: database.uri, PORT: String(port), LOG_LEVEL: 'warn', MQ_SANDBOX: 'true' };
  const child = spawn(process.execPath, [mainJs], { env, cwd: root });
  let output = '';
  child.stdout?.on('data', (d) => (output += String(d)));
  child.stderr?.on('data', (d) => (output += String(d)));
  service = { child, output: () => output, exit: new Promise((resolve) => child.on('exit', resolve)) };

  // The admin command mints the token on the same database while the service starts.
  const minted = await mqWith({ MONGODB_URI: database.uri }, 'token', 'create', '--host', 'sandbox', '--owner', OWNER);
  expect(minted.code).toBe(0);
  token = minted.stdout.trim();

  const deadline = Date.now() + 45_000;
  for (;;) {
    const up = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (up) break;
    if (Date.now() > deadline) throw new Error(`service did not come up:\n${output}`);
    await new Promise((r) => setTimeout(r, 150));
  }
  const repo = { host: 'sandbox', owner: OWNER, name: 'app' };
  expect((await post('/v1/createQueue', { repo, targetBranch: 'main' })).status).toBe(200);
  // CI of an hour: the states the tests look at hold still.
  for (const number of [1, 2, 3]) {
    expect((await post('/sandbox/updatePullRequest', { repo, pr: { number }, title: `Change ${number}`, ciSeconds: 3600 })).status).toBe(200);
  }
}, 90_000);

afterAll(async () => {
  if (service) {
    service.child.kill('SIGTERM');
    await service.exit;
  }
  if (database) await dropTestDatabase(database);
  await stopTestServer();
  if (scratch) await rm(scratch, { recursive: true, force: true });
}, 30_000);

describe('mq login and logout', () => {
  test('a wrong token is refused and nothing saved; a good one is saved 0600 for its URL, and serves later calls until logout', async () => {
    const config = join(scratch, 'config');
    const env = { MQ_CONFIG_DIR: config };
    const file = join(config, 'credentials.json');

    expectFailure(await mqWith(env, 'login', '--url', url, '--token', 'mq_wrong'), 2, /401 .*nothing saved/);
    expect(existsSync(file)).toBe(false);
    expectFailure(await mqWith(env, 'queues'), 2, /not signed in to http:\/\/127\.0\.0\.1:3000: run `mq login --url http:\/\/127\.0\.0\.1:3000` \(it asks for the token\), or set MQ_TOKEN$/);

    const login = expectOk(await mqWith(env, 'login', '--url', `${url}/`, '--token', token));
    expect(login).toEqual([`Signed in to ${url} (1 queue visible); token saved in ${file}.`]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(config).mode & 0o777).toBe(0o700);

    // No --url, no MQ_URL, no token: both come from the file.
    const queues = expectOk(await mqWith(env, 'queues'));
    expect(queues[1]).toMatch(/^sandbox\/people\/app\s+main\s+RUNNING/);

    expect(expectOk(await mqWith(env, 'logout'))).toEqual([`Signed out of ${url}.`]);
    expect(existsSync(file)).toBe(false);
    expectFailure(await mqWith(env, 'queues'), 2, /not signed in/);
  });

  test('without MQ_CONFIG_DIR the file goes under $XDG_CONFIG_HOME/merge-queue; --json says where', async () => {
    const xdg = join(scratch, 'xdg');
    const login = await mqWith({ XDG_CONFIG_HOME: xdg }, 'login', '--url', url, '--token', token, '--json');
    expect(JSON.parse(expectOk(login).join('\n'))).toEqual({ url, credentialsFile: join(xdg, 'merge-queue', 'credentials.json'), queues: 1 });
    expect(statSync(join(xdg, 'merge-queue', 'credentials.json')).mode & 0o777).toBe(0o600);
  });
});

describe('mq against the queue', () => {
  test('queues: an aligned table, and --json as the API answered', async () => {
    const [table, json] = await Promise.all([mq('queues'), mq('queues', '--json')]);
    const lines = expectOk(table);
    expect(lines[0]).toMatch(/^REPO\s+BRANCH\s+STATE\s+MODE\s+DEPTH\s+TESTING/);
    expect(lines[1]).toMatch(/^sandbox\/people\/app\s+main\s+RUNNING\s+single\s+\d+/);
    expect(lines[0]?.indexOf('STATE')).toBe(lines[1]?.indexOf('RUNNING'));
    const body = JSON.parse(expectOk(json).join('\n')) as { queues: { repo: { name: string } }[] };
    expect(body.queues.map((q) => q.repo.name)).toEqual(['app']);
  });

  test('submit, status of the queue and of a PR, restart (400 when not testing), cancel, and a PR never submitted', async () => {
    expect(expectOk(await mq('submit', '1'))).toEqual([`Submitted #1 in ${REPO} main: TESTING (priority medium).`]);
    const second = JSON.parse(expectOk(await mq('submit', '#2', '--priority', 'high', '--no-batch', '--json')).join('\n')) as Record<string, unknown>;
    expect(second).toMatchObject({ prNumber: 2, state: 'PENDING', priorityName: 'high', noBatch: true });

    const [queue, queueJson, pr, prJson] = await Promise.all([mq('status'), mq('status', '--json'), mq('status', '1'), mq('status', '1', '--json')]);
    const lines = expectOk(queue);
    expect(lines[0]).toMatch(/^sandbox\/people\/app main: RUNNING \(single, concurrency 1, adaptive batches, 1 run in flight/);
    expect(lines[1]).toMatch(/^POS\s+PR\s+STATE\s+PRIORITY\s+MERGES \(FORECAST\)\s+TITLE$/);
    // The PR under test first, then the line; each with a forecast merge time.
    // A forecast on another day (near midnight) shows its date too.
    expect(lines[2]).toMatch(/^\s*1\s+#1\s+TESTING\s+medium\s+(\d{4}-\d\d-\d\d )?\d\d:\d\d \(in \d+ min\)\s+Change 1$/);
    expect(lines[3]).toMatch(/^\s*2\s+#2\s+PENDING\s+high, no batch\s+(\d{4}-\d\d-\d\d )?\d\d:\d\d \(in \d+ min\)\s+Change 2$/);
    const board = JSON.parse(expectOk(queueJson).join('\n')) as { queue: { enqueuedPullRequests: { prNumber: number; estimatedMergeAt?: string }[] } };
    expect(board.queue.enqueuedPullRequests.map((p) => p.prNumber).sort()).toEqual([1, 2]);
    expect(board.queue.enqueuedPullRequests.every((p) => typeof p.estimatedMergeAt === 'string')).toBe(true);

    const shown = expectOk(pr);
    expect(shown[0]).toBe('#1 Change 1');
    expect(shown).toEqual(expect.arrayContaining([expect.stringMatching(/^State:\s+TESTING since/), expect.stringMatching(/^Merges:\s+forecast (\d{4}-\d\d-\d\d )?\d\d:\d\d/), expect.stringMatching(/^TIME\s+STATE\s+REASON\s+DETAIL$/)]));
    expect(shown.some((l) => /^\d\d:\d\d:\d\d\s+NOT_READY\s+submitted/.test(l))).toBe(true);
    const view = JSON.parse(expectOk(prJson).join('\n')) as { state: string; timeline: unknown[] };
    expect(view.state).toBe('TESTING');
    expect(view.timeline.length).toBeGreaterThanOrEqual(2);

    expectFailure(await mq('restart', '2'), 1, /^mq: 400 .*TESTING or PENDING_FAILURE/);
    expect(expectOk(await mq('restart', '1'))).toEqual([`Restarted the tests of #1 in ${REPO} main: TESTING (priority medium).`]);
    expect(expectOk(await mq('cancel', '2'))).toEqual([`Cancelled #2 in ${REPO} main: CANCELLED (priority high, no batch).`]);
    expectFailure(await mq('status', '99'), 3, /^mq: 404 Pull request #99 was never submitted to the queue for main\.$/);
  });

  test('pause, drain and resume: a line each, or the queue as JSON', async () => {
    expect(expectOk(await mq('pause'))).toEqual([`${REPO} main: PAUSED (1 PR enqueued).`]);
    const drained = JSON.parse(expectOk(await mq('drain', '--json')).join('\n')) as { state: string };
    expect(drained.state).toBe('DRAINING');
    expect(expectOk(await mq('resume'))).toEqual([`${REPO} main: RUNNING (1 PR enqueued).`]);
  });

  test('targets from a file of lines, a JSON array, stdin-free --all, and the usage errors', async () => {
    const sha = (JSON.parse((await mq('status', '1', '--json')).stdout) as { prSha: string }).prSha;
    const lines = join(scratch, 'targets.txt');
    const array = join(scratch, 'targets.json');
    await writeFile(lines, '//app:server\n//lib:core\n\n');
    await writeFile(array, '["a", "b", "c"]');
    const [fromLines, fromArray, all] = await Promise.all([
      mq('targets', '1', '--sha', sha, '--file', lines),
      mq('targets', '1', '--sha', sha, '--file', array, '--json'),
      mq('targets', '3', '--sha', 'abcdef12abcdef12abcdef12abcdef12abcdef12', '--all'),
    ]);
    expect(expectOk(fromLines)).toEqual([`Set 2 impacted targets for #1 at ${sha.slice(0, 12)} in ${REPO} main.`]);
    expect(JSON.parse(expectOk(fromArray).join('\n'))).toEqual({ prNumber: 1, sha, impactedTargets: { count: 3 }, isCurrentlySubmittedToQueue: true });
    expect(expectOk(all)).toEqual([`Set ALL targets for #3 at abcdef12abcd in ${REPO} main (not in the queue now).`]);

    const [neither, both, badSha, shortSha, missing] = await Promise.all([
      mq('targets', '1', '--sha', sha),
      mq('targets', '1', '--sha', sha, '--file', lines, '--all'),
      mq('targets', '1', '--sha', 'not-hex', '--all'),
      mq('targets', '1', '--sha', sha.slice(0, 8), '--all'),
      mq('targets', '1', '--sha', sha, '--file', join(scratch, 'nope.txt')),
    ]);
    expectFailure(neither, 1, /either --file F .* or --all/);
    expectFailure(both, 1, /either --file F .* or --all/);
    expectFailure(badSha, 1, /--sha not-hex must be/);
    // An abbreviated sha would never match the head the host reports: refused before anything is sent.
    expectFailure(shortSha, 1, /must be the PR head's full commit sha/);
    expectFailure(missing, 1, /cannot read --file .*no such file/);
  });
});

describe('mq failures: exit codes and one line', () => {
  test('a wrong token and another organization (2), a queue that does not exist (3), bad usage (1)', async () => {
    const [wrong, otherOrg, noQueue, badPr, noRepo, unknown, badPriority] = await Promise.all([
      mqWith({ MQ_URL: url, MQ_TOKEN: 'mq_wrong', MQ_CONFIG_DIR: join(scratch, 'unused-config') }, 'queues'),
      mq('status', '--repo', 'sandbox/someone-else/app'),
      mq('status', '--repo', 'sandbox/people/nope', '--json'),
      mq('submit', 'abc'),
      mqWith({ MQ_URL: url, MQ_TOKEN: token, MQ_CONFIG_DIR: join(scratch, 'unused-config') }, 'status'),
      mq('queus'),
      mq('submit', '1', '--priority', 'soon'),
    ]);
    expectFailure(wrong, 2, /^mq: 401 .*\(token from MQ_TOKEN\)\.$/);
    expectFailure(otherOrg, 2, /^mq: 403 This token belongs to people on sandbox/);
    expectFailure(noQueue, 3, /^mq: 404 /);
    expectFailure(badPr, 1, /abc is not a pull request number/);
    expectFailure(noRepo, 1, /which queue\? pass --repo/);
    expectFailure(unknown, 1, /unknown command 'queus' \(Did you mean queues\?\)/);
    expectFailure(badPriority, 1, /--priority soon must be urgent, high, medium, low or a number/);
  });

  test('a server that is down: exit 4 and one line naming the address', async () => {
    const closed = await freePort();
    const down = await mqWith({ MQ_TOKEN: token, MQ_REPO: REPO, MQ_CONFIG_DIR: join(scratch, 'unused-config') }, 'status', '--url', `http://127.0.0.1:${closed}`);
    expectFailure(down, 4, new RegExp(`^mq: cannot reach http://127\\.0\\.0\\.1:${closed}/v1/getQueueBoard \\(connection refused\\)`));
  });

  // Found by a review of the CLI: fetch's refusal of such a header quoted it, so the token (and what was piped after it)
  // was printed; a time limit a timer cannot hold broke every request; an answer of another service crashed bare.
  test('a token with a line break is refused without being printed; a time limit out of range and an answer of another service are said in one line', async () => {
    const secret = 'mq_abc\nOTHER_SECRET=hunter2';
    const badToken = await mqWith({ MQ_URL: url, MQ_TOKEN: secret, MQ_REPO: REPO, MQ_CONFIG_DIR: join(scratch, 'unused-config') }, 'queues');
    expectFailure(badToken, 1, /^mq: the token from MQ_TOKEN holds a space, line break/);
    expect(badToken.stderr).not.toContain('hunter2');
    const badLogin = await mqWith({ MQ_TOKEN: secret, MQ_CONFIG_DIR: join(scratch, 'login-config') }, 'login', '--url', url);
    expectFailure(badLogin, 1, /^mq: the token from MQ_TOKEN holds/);
    expect(badLogin.stderr).not.toContain('hunter2');
    const huge = await mqWith({ MQ_URL: url, MQ_TOKEN: token, MQ_REPO: REPO, MQ_TIMEOUT_SECONDS: '99999999', MQ_CONFIG_DIR: join(scratch, 'unused-config') }, 'queues');
    expectFailure(huge, 1, /^mq: MQ_TIMEOUT_SECONDS must be a number of seconds above 0 and at most 2147483/);
    const notOurs = await againstServerAnswering('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n[]');
    expectFailure(notOurs, 4, /^mq: http:\/\/127\.0\.0\.1:\d+\/v1\/listQueues answered with JSON that is not the merge queue API's/);
    // A redirect names the service's address to use, not the endpoint's (given as --url, `/v1/listQueues` was doubled).
    const moved = await againstServerAnswering('HTTP/1.1 301 Moved Permanently\r\nlocation: https://mq.example.com/v1/listQueues\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    expectFailure(moved, 1, /redirects to https:\/\/mq\.example\.com\/v1\/listQueues: use https:\/\/mq\.example\.com as --url$/);
  });

  test('--help documents the exit codes', async () => {
    const help = await mqWith({}, '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Exit codes:\n\s+0 .*\n\s+1 .*\n\s+2 .*401.*403.*\n\s+3 .*404.*\n\s+4 .*unreachable/);
  });
});
