/**
 * Faults of our own: three service replicas (the built `dist/main.js`) on one
 * database, PRs on the sandbox that pass, fail, flake and conflict, and
 * `kill -9` of random replicas (and once of all three) while they work, each
 * restarted on its port. Readers keep calling the API the whole time. Then:
 * every PR ended or waits with a stated reason, none merged twice, no failing
 * PR merged, no PR failed but by a verdict of its own run (a failing or flaky
 * check, a conflict: never a time-out or a start lost to a kill), and no
 * replica answered a 5xx.
 * The kill schedule is seeded (MQ_FAULT_SEED) and printed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { Rng } from '../../src/simulation/random.js';
import type { Stores } from '../../src/ports/stores.js';
import { tokenService } from '../../src/tokens/token-service.js';
import { createTestDatabaseUri, dropTestDatabase, stopTestServer, type TestDatabaseUri } from '../support/test-database.js';

const root = process.cwd();
const mainJs = join(root, 'dist', 'main.js');
const SEED = Number(process.env.MQ_FAULT_SEED ?? 20261124);
const LEASE_MS = 6_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One replica: a process on a fixed port, killed and started again by the test. */
class Replica {
  private child: ChildProcess | null = null;
  log = '';
  constructor(
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }
  async start(): Promise<void> {
    const child = spawn(process.execPath, [mainJs], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(this.port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...this.env },
    });
    child.stdout?.on('data', (d) => (this.log = (this.log + String(d)).slice(-20_000)));
    child.stderr?.on('data', (d) => (this.log = (this.log + String(d)).slice(-20_000)));
    this.child = child;
    const deadline = Date.now() + 30_000;
    while (!(await fetch(`${this.url}/readyz`).then((r) => r.ok).catch(() => false))) {
      if (!this.alive) throw new Error(`replica :${this.port} exited: ${this.log.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`replica :${this.port} not ready: ${this.log.slice(-2000)}`);
      await sleep(50);
    }
  }
  kill(): void {
    this.child?.kill('SIGKILL');
  }
  async stop(): Promise<void> {
    if (!this.alive || !this.child) return;
    const exited = new Promise((r) => this.child?.once('exit', r));
    this.child.kill('SIGTERM');
    await Promise.race([exited, sleep(5_000)]);
    this.kill();
  }
}

let database: TestDatabaseUri;
let stores: Stores;
const replicas: Replica[] = [];

beforeAll(async () => {
  if (!existsSync(mainJs)) throw new Error('dist/ is missing: run `npm run build` (npm test does) before these tests');
  database = await createTestDatabaseUri('replicas');
  stores = await openMongoStores({ uri: database.uri });
});
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await stores?.close();
  await dropTestDatabase(database);
  await stopTestServer();
});

type Outcome = 'pass' | 'fail' | 'flaky' | 'conflict';

test('kill -9 of replicas while they work: nothing lost, nothing merged twice, no verdict changed by a kill, no 5xx', async () => {
  // The kill schedule has a generator of its own, so the readers' draws do not change it.
  // Seeded (mulberry32, the simulator's): a failing schedule can be replayed.
  const scheduleRng = new Rng(SEED);
  const random = () => scheduleRng.next();
  const noiseRng = new Rng(SEED ^ 0x5bd1e995);
  const noise = () => noiseRng.next();
  const env = { MONGODB_URI: database.uri, MQ_SANDBOX: 'true', MQ_QUEUE_LEASE_MS: String(LEASE_MS) };
  for (let i = 0; i < 3; i++) replicas.push(new Replica(await freePort(), env));
  await Promise.all(replicas.map((r) => r.start()));
  const token = (await tokenService(stores.tokens).create({ host: 'sandbox', owner: 'faults' })).token;
  const repo = { host: 'sandbox', owner: 'faults', name: 'app' };
  const counts = { requests: 0, fiveHundreds: 0, refused: 0, kills: 0, restarts: 0 };
  const liveReplica = () => {
    const live = replicas.filter((r) => r.alive);
    return live.length === 0 ? null : (live[Math.floor(noise() * live.length)] as Replica);
  };
  /** Calls a live replica; a refused connection (a replica just killed) is tried on another. */
  async function call(path: string, body: object, attempts = 20): Promise<Record<string, unknown>> {
    for (let attempt = 0; attempt < attempts; attempt++) {
      const replica = liveReplica();
      if (!replica) {
        await sleep(200);
        continue;
      }
      counts.requests++;
      const res = await fetch(`${replica.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-token': token }, body: JSON.stringify({ repo, ...body }) }).catch(() => null);
      if (!res) {
        counts.refused++;
        await sleep(100);
        continue;
      }
      if (res.status >= 500) counts.fiveHundreds++;
      if (res.ok) return (await res.json()) as Record<string, unknown>;
      throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    }
    throw new Error(`${path}: no replica answered`);
  }

  await call('/v1/createQueue', { targetBranch: 'main', concurrency: 3 });
  const outcomes = new Map<number, Outcome>();
  const plan: Outcome[] = ['pass', 'pass', 'fail', 'pass', 'flaky', 'conflict', 'pass', 'fail', 'pass', 'conflict', 'flaky', 'pass', 'pass', 'pass'];
  plan.forEach((outcome, i) => outcomes.set(i + 1, outcome));
  const conflicting = [...outcomes].filter(([, o]) => o === 'conflict').map(([n]) => n);
  for (const [n, outcome] of outcomes) {
    await call('/sandbox/updatePullRequest', {
      pr: { number: n },
      ciSeconds: 1,
      outcome: outcome === 'conflict' ? 'pass' : outcome,
      ...(outcome === 'flaky' ? { flakyRate: 0.5 } : {}),
      ...(outcome === 'conflict' ? { conflictsWith: conflicting.filter((c) => c !== n) } : {}),
    });
  }

  // Readers the whole time, on whichever replicas are alive.
  let reading = true;
  const readers = Array.from({ length: 2 }, async () => {
    while (reading) {
      const n = 1 + Math.floor(noise() * outcomes.size);
      await call(noise() < 0.5 ? '/v1/getQueue' : '/v1/listPullRequests', { targetBranch: 'main' }).catch(() => undefined);
      await call('/v1/getSubmittedPullRequest', { targetBranch: 'main', pr: { number: n } }).catch(() => undefined);
      await sleep(50);
    }
  });

  // Submissions spread over the replicas while the kills go on.
  const submissions = (async () => {
    for (const n of outcomes.keys()) {
      await call('/v1/submitPullRequest', { targetBranch: 'main', pr: { number: n } });
      await sleep(300 + noise() * 500);
    }
  })();
  const schedule: string[] = [];
  for (let round = 0; round < 6; round++) {
    await sleep(1_500 + random() * 2_000);
    if (round === 3) {
      schedule.push('all');
      for (const r of replicas) r.kill();
      counts.kills += replicas.length;
      await sleep(500);
      await Promise.all(replicas.map((r) => r.start()));
      counts.restarts += replicas.length;
      continue;
    }
    const victim = replicas[Math.floor(random() * replicas.length)] as Replica;
    schedule.push(String(replicas.indexOf(victim)));
    victim.kill();
    counts.kills++;
    await sleep(300 + random() * 1_000);
    await victim.start();
    counts.restarts++;
  }
  await submissions;

  // Everything ends (bounded): terminal, or NOT_READY with a reason.
  type Pr = { state: string; notReadyReason?: string; timeline: Array<{ state: string; reason: string }> };
  const read = async (n: number) => (await call('/v1/getSubmittedPullRequest', { targetBranch: 'main', pr: { number: n }, includeTimeline: true })) as unknown as Pr;
  const deadline = Date.now() + 60_000;
  let prs: Map<number, Pr>;
  for (;;) {
    prs = new Map(await Promise.all([...outcomes.keys()].map(async (n) => [n, await read(n)] as const)));
    const settled = [...prs.values()].every((pr) => ['MERGED', 'FAILED', 'CANCELLED'].includes(pr.state) || (pr.state === 'NOT_READY' && pr.notReadyReason));
    if (settled) break;
    if (Date.now() > deadline) {
      for (const r of replicas) console.error(`replica :${r.port} log tail:\n${r.log.slice(-3000)}`);
      throw new Error(`not settled: ${JSON.stringify([...prs].map(([n, pr]) => [n, pr.state]))}`);
    }
    await sleep(250);
  }
  reading = false;
  await Promise.all(readers);

  const byOutcome: Record<string, string[]> = {};
  for (const [n, pr] of prs) {
    const outcome = outcomes.get(n) as Outcome;
    (byOutcome[outcome] ??= []).push(`#${n} ${pr.state}`);
    // None merged twice (each attempt is one timeline; there is one attempt here).
    expect(pr.timeline.filter((e) => e.state === 'MERGED')).toHaveLength(pr.state === 'MERGED' ? 1 : 0);
    if (outcome === 'fail') expect(pr.state).toBe('FAILED');
    expect(['MERGED', 'FAILED']).toContain(pr.state);
    if (pr.state === 'FAILED' && outcome !== 'fail') {
      // A PR that does not break the build fails only by a verdict: a conflict of its own, or a
      // flaky check (a flaky PR ahead of it in its run, or itself) — never by a kill (no
      // time-out, no run that could not be started).
      const last = pr.timeline[0] as { reason: string; detail?: string };
      if (last.reason === 'merge_conflict') expect(outcome).toBe('conflict');
      else {
        expect(last.reason).toBe('failed_tests');
        const named = [...(last.detail ?? '').matchAll(/sandbox-ci \(#(\d+)\)/g)].map((m) => outcomes.get(Number(m[1])));
        expect(named.length).toBeGreaterThan(0);
        expect(named.every((o) => o === 'flaky')).toBe(true);
      }
    }
  }
  // Two PRs that conflict cannot both land.
  expect(conflicting.filter((n) => prs.get(n)?.state === 'MERGED').length).toBeLessThanOrEqual(1);
  // The sandbox's own record agrees: merged exactly the PRs the queue says it merged.
  const sandbox = (await call('/sandbox/getRepository', {})) as { pullRequests: Record<string, { merged: boolean }> };
  for (const [n, pr] of prs) expect(sandbox.pullRequests[String(n)]?.merged ?? false).toBe(pr.state === 'MERGED');
  expect(counts.fiveHundreds).toBe(0);
  console.error(`fault test (seed ${SEED}, kills ${schedule.join(',')}): ${JSON.stringify(byOutcome)}; ${JSON.stringify(counts)}`);
}, 150_000);
