import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGitHubHarness, type GitHubHarness } from '../test/support/github-harness.js';

/**
 * `npm run bench:github`: GitHub API requests the queue makes per merged PR,
 * counted on the fake GitHub (test/support/fake-github) that validates every
 * request against GitHub's OpenAPI description. Workloads: a lone PR, and a
 * batch of four; each from the label to the PR merged and the queue idle
 * (test branch deleted, the PR's check run final). Branch protection requires
 * one check, `ci`, which a fake CI reports on every test branch. Every number
 * printed was counted in this run.
 *
 * Counted in steady state: each workload's queue first lands one PR that is
 * not counted (the first run of a queue creates its staging branch, the first
 * of the process reads the App's slug).
 *
 * Goals (issue 9): at most 15 requests for a lone PR, at most 8 per PR in a
 * batch of four.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = (text = '') => process.stdout.write(`${text}\n`);

interface Counted {
  workload: string;
  prs: number;
  requests: number;
  perPr: number;
  byOperation: Record<string, number>;
}

async function main(): Promise<void> {
  // No periodic catch-up: only what the queue's work itself costs is counted.
  const h = await startGitHubHarness({ maintenanceMs: 0 });
  try {
    const results = [await measure(h, 'lone PR', 1, {}), await measure(h, 'batch of 4', 4, { batch: true, batchingMinSize: 4, batchingMaxWaitTimeMinutes: 10 })];
    out('# GitHub requests per merged PR (fake GitHub, merge_commit, protection requires `ci`)');
    out('| workload | PRs | requests | per PR | goal |');
    out('|---|--:|--:|--:|--:|');
    const goals: Record<string, number> = { 'lone PR': 15, 'batch of 4': 8 };
    for (const r of results) out(`| ${r.workload} | ${r.prs} | ${r.requests} | ${r.perPr.toFixed(1)} | ${goals[r.workload]} |`);
    for (const r of results) {
      out(`\n## ${r.workload}: requests by operation`);
      for (const [operation, count] of Object.entries(r.byOperation).sort((a, b) => b[1] - a[1])) out(`- ${operation}: ${count}`);
    }
    if (h.fake.violations.length > 0) throw new Error(`the fake GitHub saw protocol violations: ${JSON.stringify(h.fake.violations.slice(0, 3))}`);
    const file = join(root, 'bench', 'results', 'github-budget.json');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, goals, results }, null, 2)}\n`);
    out(`\nwrote ${file}`);
  } finally {
    await h.close();
  }
}

let repos = 0;
async function measure(h: GitHubHarness, workload: string, count: number, config: Record<string, unknown>): Promise<Counted> {
  const name = `budget${++repos}`;
  const repo = h.fake.createRepo(`acme/${name}`);
  repo.protectBranch('main', { requiredChecks: ['ci'] });
  const ref = { host: 'github.com', owner: 'acme', name };
  await expectOk(h.api('/v1/createQueue', { repo: ref, targetBranch: 'main' }));
  await expectOk(h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', mergeMethod: 'merge_commit', ...config }));
  const open = (title: string) => {
    const n = repo.openPullRequest({ title });
    h.fake.ci.complete(repo.pullRequest(n).headSha, 'ci');
    return n;
  };
  const stopCi = h.fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'] });
  // Warm-up, not counted: a lone PR lands first (with batching, after the batch wait).
  await expectOk(h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', batch: false }));
  const warmUp = open('warm-up');
  repo.addLabel(warmUp, 'merge-queue');
  await h.fake.waitFor(() => repo.pullRequest(warmUp).merged, { timeoutMs: 60_000, message: 'the warm-up PR to merge' });
  await settle(h);
  await expectOk(h.api('/v1/updateQueue', { repo: ref, targetBranch: 'main', mergeMethod: 'merge_commit', ...config }));
  const numbers = Array.from({ length: count }, (_, i) => open(`${workload} ${i + 1}`));
  await h.fake.webhooks.idle();
  await settle(h);
  const from = h.fake.requests.length;
  try {
    for (const n of numbers) repo.addLabel(n, 'merge-queue');
    await h.fake.waitFor(() => numbers.every((n) => repo.pullRequest(n).merged), { timeoutMs: 60_000, message: `${workload} to merge` });
    // Idle: test branches gone, every PR's check run final, and nothing more asked for a while.
    await h.fake.waitFor(() => !repo.branches().some((b) => b.startsWith('mq/')), { timeoutMs: 30_000, message: 'test branches deleted' });
    await h.fake.waitFor(() => numbers.every((n) => h.fake.checkRuns(repo.pullRequest(n).headSha, 'Merge Queue (main)').at(-1)?.conclusion === 'success'), {
      timeoutMs: 30_000,
      message: 'check runs final',
    });
    await settle(h);
  } finally {
    stopCi();
  }
  const made = h.fake.requests.slice(from).filter((r) => r.path.includes(`/acme/${name}`) || !r.path.includes('/repos/'));
  const byOperation: Record<string, number> = {};
  for (const r of made) byOperation[r.operationId ?? `${r.method} ${r.path}`] = (byOperation[r.operationId ?? `${r.method} ${r.path}`] ?? 0) + 1;
  return { workload, prs: count, requests: made.length, perPr: made.length / count, byOperation };
}

/** Waits until the service has made no request for a second. */
async function settle(h: GitHubHarness): Promise<void> {
  let seen = -1;
  while (seen !== h.fake.requests.length) {
    seen = h.fake.requests.length;
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

async function expectOk(response: Promise<{ status: number; body: string }>): Promise<void> {
  const res = await response;
  if (res.status !== 200) throw new Error(`the API answered ${res.status}: ${res.body}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
