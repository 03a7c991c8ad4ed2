/**
 * A host that fails is not a PR that fails: while the sandbox host answers
 * 502s or not at all, PRs keep their places and wait; once it answers again
 * they merge, each once, and none is failed by the outage.
 */
import type { GitHost } from '../../src/ports/git-host.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { waitFor } from '../support/wait-for.js';

let h: ApiHarness;
let token: string;
/** What the injected fault looks like, or null when the host works. */
let fault: 'bad_gateway' | 'no_answer' | null = null;
/** The calls that fail while `fault` is set (all by default). */
let failing: ReadonlySet<string> | null = null;
const failedCalls: string[] = [];
/** Whether each merge asked of the host said it was asked again (after a transient failure). */
const mergesAskedAgain: boolean[] = [];

beforeAll(async () => {
  h = await startApiHarness({ prefix: 'outage', sandboxTimeScale: 0.02, hostRetryDelayMs: () => 40 });
  token = await h.tokenFor('demo', 'sandbox');
  const sandbox = h.sandbox as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const method of ['startTestRun', 'merge', 'reportPullRequestStatus', 'readBranchHead'] satisfies Array<keyof GitHost>) {
    const original = sandbox[method]!.bind(sandbox);
    sandbox[method] = async (...args: unknown[]) => {
      if (method === 'merge') mergesAskedAgain.push((args[0] as { askedAgain?: boolean }).askedAgain === true);
      if (fault && (!failing || failing.has(method))) {
        failedCalls.push(method);
        throw fault === 'bad_gateway' ? Object.assign(new Error('Bad Gateway'), { status: 502 }) : new Error('request timed out');
      }
      return original(...args);
    };
  }
});
afterAll(() => h.close());

let repoCounter = 0;
const newRepo = () => ({ host: 'sandbox', owner: 'demo', name: `outage${++repoCounter}` });

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body, token);
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

const prState = (repo: object, number: number) => ok('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number }, includeTimeline: true });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test.each(['bad_gateway', 'no_answer'] as const)('while test runs cannot start (%s), PRs wait in place; afterwards they merge and none failed', async (kind) => {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  for (const number of [1, 2, 3]) await ok('/sandbox/updatePullRequest', { repo, pr: { number }, ciSeconds: 2 });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 99 } }); // The branch exists before the outage.
  await sleep(100);
  failedCalls.length = 0;
  fault = kind;
  try {
    // Requests are answered during the outage: they record and decide, the host is called afterwards.
    for (const number of [1, 2, 3]) expect((await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number } })).state).not.toBe('FAILED');
    await sleep(600);
    expect(failedCalls.length).toBeGreaterThan(2);
    const during = await Promise.all([1, 2, 3].map((n) => prState(repo, n)));
    expect(during.map((pr) => pr.state).every((s) => s === 'TESTING' || s === 'PENDING')).toBe(true);
    // The API says why they wait: the queue reports the outage, each PR its reason.
    const queue = await ok('/v1/getQueue', { repo, targetBranch: 'main' });
    expect(queue.problems).toEqual([{ kind: 'host_unavailable', since: expect.any(String), message: expect.stringMatching(kind === 'bad_gateway' ? /502/ : /timed out/) }]);
    expect(during.every((pr) => /repository host has been failing/.test(pr.waitingReason))).toBe(true);
  } finally {
    fault = null;
  }
  const after = await waitFor(
    () => Promise.all([1, 2, 3].map((n) => prState(repo, n))),
    (prs) => prs.every((pr) => pr.state === 'MERGED'),
  );
  expect((await ok('/v1/getQueue', { repo, targetBranch: 'main' })).problems).toEqual([]);
  for (const pr of after) {
    expect(pr.waitingReason).toBeUndefined();
    const states = pr.timeline.map((e: { state: string }) => e.state);
    expect(states).not.toContain('FAILED');
    expect(states.filter((s: string) => s === 'MERGED')).toHaveLength(1);
  }
});

test('a merge that times out is retried until it lands, exactly once', async () => {
  const repo = newRepo();
  await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 10 });
  await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
  // CI takes 200 ms: the merge comes while the host does not answer it.
  fault = 'no_answer';
  failing = new Set(['merge']);
  failedCalls.length = 0;
  mergesAskedAgain.length = 0;
  try {
    await waitFor(async () => failedCalls.filter((m) => m === 'merge').length, (n) => n >= 2);
    expect((await prState(repo, 1)).state).toBe('TESTS_PASSED');
  } finally {
    fault = null;
    failing = null;
  }
  const merged = await waitFor(() => prState(repo, 1), (pr) => pr.state === 'MERGED');
  expect(merged.timeline.map((e: { state: string }) => e.state).filter((s: string) => s === 'MERGED')).toHaveLength(1);
  const sandboxRepo = await h.sandbox!.inspect(repo);
  expect(sandboxRepo.pullRequests['1']?.merged).toBe(true);
  // The host is told each retry is one (an earlier attempt may have landed and commented: land-tested-commit.ts).
  expect(mergesAskedAgain[0]).toBe(false);
  expect(mergesAskedAgain.length).toBeGreaterThanOrEqual(3);
  expect(mergesAskedAgain.slice(1).every(Boolean)).toBe(true);
  // The check run (the sandbox keeps the last status shown) ends where the PR ends.
  await waitFor(async () => (await h.sandbox!.inspect(repo)).pullRequests['1']?.queueStatus?.state, (s) => s === 'MERGED');
});
