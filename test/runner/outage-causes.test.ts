/**
 * Two sources say the host is unavailable: the runner, whose actions fail, and
 * the App's installation events (host-events.ts hostAccess). An installation
 * event saying the App is installed while every host call still fails must not
 * end the outage: runs would time out and their PRs fail (found by review).
 */
import type { GitHost } from '../../src/ports/git-host.js';
import { hostEvents } from '../../src/runner/host-events.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { waitFor } from '../support/wait-for.js';

let h: ApiHarness;
let token: string;
let failing = false;

beforeAll(async () => {
  h = await startApiHarness({ prefix: 'outage_causes', sandboxTimeScale: 0.02, hostRetryDelayMs: () => 40 });
  token = await h.tokenFor('demo', 'sandbox');
  // Every host call the runner makes answers 502 while `failing`.
  const sandbox = h.sandbox as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const method of ['startTestRun', 'merge', 'reportPullRequestStatus', 'readBranchHead'] satisfies Array<keyof GitHost>) {
    const original = (sandbox[method] as (...args: unknown[]) => Promise<unknown>).bind(sandbox);
    sandbox[method] = async (...args: unknown[]) => {
      if (failing) throw Object.assign(new Error('Bad Gateway'), { status: 502 });
      return original(...args);
    };
  }
});
afterAll(() => h.close());

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body, token);
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const problemsOf = (repo: unknown) => () => ok('/v1/getQueue', { repo, targetBranch: 'main' }).then((q) => q.problems as Array<{ kind: string }>);

test('the App installed again during an outage leaves the outage the runner still sees; an action going through ends it', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'causes' };
  const queue = await ok('/v1/createQueue', { repo, targetBranch: 'main' });
  await ok('/sandbox/updatePullRequest', { repo, pr: { number: 1 }, ciSeconds: 2 });
  failing = true;
  try {
    await ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } });
    const problems = problemsOf(repo);
    await waitFor(problems, (p) => p.some((x) => x.kind === 'host_unavailable'));
    // What github-app.ts does on installation.created, unsuspend or repositories added, when GitHub says the App is installed.
    await hostEvents(h.runner!, h.stores).hostAccess(queue.id as string, { available: true });
    await sleep(500); // many failed retries meanwhile, 40 ms apart
    expect(await problems()).toEqual([expect.objectContaining({ kind: 'host_unavailable' })]);
  } finally {
    failing = false;
  }
  await waitFor(problemsOf(repo), (p) => p.length === 0);
  const pr = await waitFor(() => ok('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: 1 } }), (p) => p.state === 'MERGED');
  expect(pr.state).toBe('MERGED');
});
