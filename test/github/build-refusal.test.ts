/**
 * GitHub refusing to build a test run is not the PRs' failure: a ruleset that keeps
 * the App from creating mq/* branches or force-pushing mq-staging/*, like a missing
 * permission, would refuse every run alike. The runner reports it as a landing that
 * is impossible, with GitHub's words, and the queue waits; a PR whose content
 * conflicts still fails alone, and one pushed to meanwhile is read again. And a private repository on GitHub Free, whose
 * protection and rules cannot be read (403), still tests on the queue's own checks.
 * The runner's host step (carryOutThroughOutages) and GitHubHost, against the fake GitHub.
 */
import { Octokit } from '@octokit/rest';
import type { GitHubClient } from '../../src/adapters/github/github-client.js';
import type { RepoRef } from '../../src/domain/repo.js';
import type { QueueEntryRecord, TestRunRecord } from '../../src/domain/records.js';
import type { EngineRun } from '../../src/engine/model.js';
import type { GitHost, TestRunRequest } from '../../src/ports/git-host.js';
import type { ActionContext } from '../../src/runner/execute-actions.js';
import { carryOutThroughOutages, RACES_LOST_BEFORE_OUTAGE } from '../../src/runner/host-outage.js';
import type { RunnerInput } from '../../src/runner/runner-model.js';
import { startFakeGitHub, type FakeGitHub, type FakeRepo } from '../support/fake-github/index.js';
import { queueRecord, testHost } from './github-fixtures.js';

const REF: RepoRef = { host: 'github.com', owner: 'acme', name: 'widgets' };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

let fake: FakeGitHub;

afterEach(async () => {
  await fake?.close();
});

async function fakeRepo(options: { private?: boolean; freePlan?: boolean } = {}): Promise<FakeRepo> {
  fake = await startFakeGitHub({ defaultPermission: 'write' });
  return fake.createRepo('acme/widgets', options);
}

function githubHost() {
  const client = new Octokit({ baseUrl: fake.baseUrl, auth: fake.installationToken('acme'), log: quiet, request: { retries: 0 } });
  return testHost({ client, queues: [queueRecord({ repo: REF, config: { requiredStatuses: ['ci'] } })] });
}

/**
 * Starts a run of these PRs as the runner does (its outage loop around the host
 * action) with stores in memory: what the engine was told, and the run's record.
 */
async function startRunThroughRunner(
  host: GitHost,
  repo: FakeRepo,
  prNumbers: number[],
  runId = 'e1',
  options: { mergeMethod?: 'squash' | 'rebase'; heads?: Map<number, string> } = {},
): Promise<{ reports: RunnerInput[]; record: TestRunRecord }> {
  const entries = new Map<string, QueueEntryRecord>(prNumbers.map((n) => [`entry${n}`, { id: `entry${n}`, prNumber: n, facts: { title: `PR ${n}` } } as unknown as QueueEntryRecord]));
  const records: TestRunRecord[] = [];
  const reports: RunnerInput[] = [];
  const stores = {
    entries: { findById: async (id: string) => entries.get(id) ?? null },
    testRuns: {
      insert: async (run: Omit<TestRunRecord, 'id'>) => {
        // As the database's: a start asked again finds the record its first attempt stored.
        const stored = records.find((r) => r.engineRunId === run.engineRunId);
        if (stored) return stored;
        const record = { ...run, id: `run${records.length + 1}` } as TestRunRecord;
        records.push(record);
        return record;
      },
      update: async (id: string, change: Partial<TestRunRecord>) => void Object.assign(records.find((r) => r.id === id)!, change),
      findByEngineRunId: async (_queueId: string, engineRunId: string) => records.find((r) => r.engineRunId === engineRunId) ?? null,
      listBuiltOn: async () => [],
    },
  };
  const ctx = {
    queue: queueRecord({ repo: REF, config: { requiredStatuses: ['ci'], mergeMethod: options.mergeMethod ?? 'squash' } }),
    stores,
    hosts: { forHost: () => host },
    log: { info() {}, warn() {}, error() {} },
    timers: {},
    now: () => Date.parse('2024-05-01T12:00:00Z'),
    report: async (input: RunnerInput) => void reports.push(input),
    wake() {},
    positionOf: () => undefined,
  } as unknown as ActionContext;
  const run: EngineRun = {
    id: runId,
    seq: 1,
    baseSha: repo.branch('main')!,
    ahead: [],
    unit: prNumbers.map((n) => ({ entryId: `entry${n}`, headSha: options.heads?.get(n) ?? repo.pullRequest(n).headSha })),
    status: 'running',
    startedAt: Date.parse('2024-05-01T12:00:00Z'),
    finishedAt: null,
    isBisection: false,
    failedChecks: [],
    failureReason: null,
  } as EngineRun;
  const done = await carryOutThroughOutages(ctx, { type: 'start_run', run }, { queueId: 'q1', outage: null }, {
    log: { info() {}, warn() {}, error() {} } as unknown as ActionContext['log'],
    now: () => Date.now(),
    delayMs: () => 1,
    sleep: async () => {},
    mayAct: async () => true,
    report: async (input: RunnerInput) => void reports.push(input),
  });
  expect(done).toBe(true);
  return { reports, record: records[0]! };
}

describe('GitHub refuses to build the run', () => {
  test('a ruleset restricting branch creation on mq/**: the queue waits and says why (GitHub\'s words); the PRs are not failed', async () => {
    const repo = await fakeRepo();
    repo.addRuleset({ name: 'no new mq branches', include: ['refs/heads/mq/**'], rules: [{ type: 'creation' }] });
    const [a, b] = [repo.openPullRequest({ title: 'A' }), repo.openPullRequest({ title: 'B' })];

    const { reports, record } = await startRunThroughRunner(githubHost().host, repo, [a, b]);

    expect(reports).toEqual([{ type: 'landing_impossible', runId: 'e1', message: expect.stringMatching(/Cannot create ref due to creations being restricted/) }]);
    expect(record).toMatchObject({ status: 'cancelled', failureStatuses: [expect.stringMatching(/refused to build a test run.*mq-staging/s)] });
    expect(repo.branches().filter((x) => x.startsWith('mq/'))).toEqual([]);
  });

  test('a ruleset against force pushes on mq-staging/**: the second run cannot move the staging branch back; the queue waits and says so, no PR failed', async () => {
    const repo = await fakeRepo();
    const { host } = githubHost();
    const first = repo.openPullRequest({ title: 'First' });
    const request: TestRunRequest = { queueId: 'q1', repo: REF, targetBranch: 'main', runId: 'r0', baseSha: repo.branch('main')!, heads: [{ prNumber: first, headSha: repo.pullRequest(first).headSha }], requiredStatuses: ['ci'], mergeMethod: 'squash' };
    expect(await host.startTestRun(request)).toMatchObject({ ok: true });
    repo.addRuleset({ name: 'no force pushes', include: ['refs/heads/mq-staging/**'], rules: [{ type: 'non_fast_forward' }] });

    const { reports } = await startRunThroughRunner(host, repo, [repo.openPullRequest({ title: 'Second' })], 'e2');

    expect(reports).toEqual([{ type: 'landing_impossible', runId: 'e2', message: expect.stringMatching(/Cannot force-push to this branch/) }]);
  });

  test('protection on the staging branch refusing the merge commit (a 409 that is no conflict): the queue waits and says why; no PR failed as conflicting', async () => {
    const repo = await fakeRepo();
    repo.protectBranch('mq-staging/main', { requiredApprovals: 0, allowForcePushes: true });
    const n = repo.openPullRequest({ title: 'Fine' });

    const { reports, record } = await startRunThroughRunner(githubHost().host, repo, [n], 'e5');

    expect(reports).toEqual([{ type: 'landing_impossible', runId: 'e5', message: expect.stringMatching(/Protected branch update failed for refs\/heads\/mq-staging\/main/) }]);
    expect(record).toMatchObject({ status: 'cancelled' });
  });

  test('a PR force-pushed after the queue read it (rebase: the head to test is not among its commits): not built, no PR failed, the queue not stopped; its head is read again and the run built again once it is (held meanwhile)', async () => {
    const repo = await fakeRepo();
    const n = repo.openPullRequest({ title: 'Moving', commits: 2 });
    const queued = repo.pullRequest(n).headSha;
    repo.pushToPullRequest(n, { rebase: true });

    const { reports, record } = await startRunThroughRunner(githubHost().host, repo, [n], 'e3', { mergeMethod: 'rebase', heads: new Map([[n, queued]]) });

    expect(reports).toEqual([
      { type: 'run_not_started', runId: 'e3', headChanged: { entryId: `entry${n}` } },
      { type: 'refresh_pull_request', prNumber: n },
    ]);
    expect(record).toMatchObject({ status: 'cancelled', failureStatuses: [expect.stringMatching(/pushed to after the queue read it/)] });
    expect(repo.branches().filter((x) => x.startsWith('mq/'))).toEqual([]);
  });

  test('a PR the queue cannot rebase (more than the 250 commits GitHub lists): that PR alone is refused, the queue goes on', async () => {
    const repo = await fakeRepo();
    const n = repo.openPullRequest({ title: 'Huge', commits: 260 });

    const { reports, record } = await startRunThroughRunner(githubHost().host, repo, [n], 'e4', { mergeMethod: 'rebase' });

    expect(reports).toEqual([{ type: 'run_not_started', runId: 'e4', refused: { entryId: `entry${n}`, message: expect.stringMatching(/more than 250 commits.*squash/) } }]);
    expect(record).toMatchObject({ status: 'failed' });
  });

  // GitHub answers 422 "Reference update failed" to an update that raced another of the same ref: on the staging
  // branch, another build moving it. Found by review: thrown as it was, the runner took it for a refusal and the queue
  // stopped testing and landing. Now a lost race, asked again: the run is built.
  test.each([
    ['moved back to the run\'s base', 1],
    ['moved to the squashed commit', 2],
  ])('the staging branch once not %s (422 "Reference update failed"): a race lost, asked again; the run is built, nothing stops', async (_, which) => {
    const repo = await fakeRepo();
    const plain = new Octokit({ baseUrl: fake.baseUrl, auth: fake.installationToken('acme'), log: quiet, request: { retries: 0 } });
    let armed = false;
    let stagingUpdates = 0;
    const racing: GitHubClient = {
      request: async (route, parameters) => {
        if (route === 'PATCH /repos/{owner}/{repo}/git/refs/{ref}' && armed && parameters?.ref === 'heads/mq-staging/main' && ++stagingUpdates === which) {
          fake.failNext({ operationId: 'git/update-ref', status: 422, message: 'Reference update failed' });
        }
        return plain.request(route, parameters);
      },
    };
    const { host } = testHost({ client: racing, queues: [queueRecord({ repo: REF, config: { requiredStatuses: ['ci'] } })] });
    const earlier = repo.openPullRequest({ title: 'Earlier' });
    expect(await host.startTestRun({ queueId: 'q1', repo: REF, targetBranch: 'main', runId: 'r0', baseSha: repo.branch('main')!, heads: [{ prNumber: earlier, headSha: repo.pullRequest(earlier).headSha }], requiredStatuses: ['ci'], mergeMethod: 'squash' })).toMatchObject({ ok: true });
    armed = true;
    const earlierUpdates = fake.requestsTo('git/update-ref').length;
    const n = repo.openPullRequest({ title: 'Raced' });

    const { reports, record } = await startRunThroughRunner(host, repo, [n], 'e5');

    expect(fake.requestsTo('git/update-ref').slice(earlierUpdates).map((r) => r.status)).toEqual(which === 1 ? [422, 200, 200] : [200, 422, 200, 200]);
    expect(reports.filter((r) => r.type === 'landing_impossible')).toEqual([]);
    expect(record.testBranchSha).toBeTruthy();
    expect(repo.branch(record.testBranch!)).toBe(record.testBranchSha);
    expect(fake.pullRequestsIn(record.testBranchSha!)).toEqual([n]);
  });

  // The same answers every time are no race: a rule (GitHub's 422 "Reference update failed" answers both), or a
  // name that clashes with another branch. After the races the runner allows, the queue waits and says so with
  // GitHub's words (found by review: it retried without end, as an outage naming no cause the operator could fix).
  test.each([
    ['the staging branch\'s move answers "Reference update failed"', 'git/update-ref', 'Reference update failed'],
    ['the test branch\'s create answers "Reference already exists", though it reads as absent', 'git/create-ref', 'Reference already exists'],
  ])('%s every time: after the races lost, the queue waits and says why in GitHub\'s words; no PR failed', async (_, operationId, message) => {
    const repo = await fakeRepo();
    const { host } = githubHost();
    const earlier = repo.openPullRequest({ title: 'Earlier' });
    expect(await host.startTestRun({ queueId: 'q1', repo: REF, targetBranch: 'main', runId: 'r0', baseSha: repo.branch('main')!, heads: [{ prNumber: earlier, headSha: repo.pullRequest(earlier).headSha }], requiredStatuses: ['ci'], mergeMethod: 'squash' })).toMatchObject({ ok: true });
    const earlier422s = fake.requestsTo(operationId).filter((r) => r.status === 422).length; // the staging branch's first create
    fake.failNext({ operationId, status: 422, message, times: 1_000 });

    const { reports, record } = await startRunThroughRunner(host, repo, [repo.openPullRequest({ title: 'Refused' })], 'e6');

    expect(reports).toEqual([{ type: 'landing_impossible', runId: 'e6', message: expect.stringContaining(message) }]);
    expect(record).toMatchObject({ status: 'cancelled' });
    expect(fake.requestsTo(operationId).filter((r) => r.status === 422)).toHaveLength(earlier422s + RACES_LOST_BEFORE_OUTAGE + 1);
  });

  test('a conflict between the PRs\' content still fails the PR that does not apply, alone', async () => {
    const repo = await fakeRepo();
    const [a, b] = [repo.openPullRequest({ title: 'A' }), repo.openPullRequest({ title: 'B' })];
    repo.declareConflict(a, b);

    const { reports } = await startRunThroughRunner(githubHost().host, repo, [a, b]);

    expect(reports).toEqual([{ type: 'run_finished', runId: 'e1', passed: false, failedChecks: ['merge conflict'], conflictEntryId: `entry${b}` }]);
  });
});

describe('a private repository on GitHub Free (protection and rules cannot be read: 403)', () => {
  test('read as unprotected, with a warning: the run is built on the queue\'s own required checks', async () => {
    const repo = await fakeRepo({ private: true, freePlan: true });
    const { host, log } = githubHost();
    const n = repo.openPullRequest({ title: 'Free' });

    const started = await host.startTestRun({ queueId: 'q1', repo: REF, targetBranch: 'main', runId: 'run1', baseSha: repo.branch('main')!, heads: [{ prNumber: n, headSha: repo.pullRequest(n).headSha }], requiredStatuses: ['ci'], mergeMethod: 'squash' });

    expect(started).toMatchObject({ ok: true, testBranch: 'mq/main/run1', requiredStatuses: ['ci'], requiredStatusesSource: 'queue' });
    expect(fake.requestsTo('repos/get-branch-protection').map((r) => r.status)).toEqual([403]);
    expect(log.entries.filter((e) => e.level === 'warn').map((e) => e.message)).toEqual([
      expect.stringMatching(/no branch protection \(Upgrade to GitHub Pro/),
      expect.stringMatching(/no rulesets \(Upgrade to GitHub Pro/),
    ]);
  });

  test('any other 403 on reading protection is still thrown (a permission the App lacks is not "no protection")', async () => {
    const repo = await fakeRepo();
    const { host } = githubHost();
    fake.failNext({ operationId: 'repos/get-branch-protection', status: 403, message: 'Resource not accessible by integration' });
    const n = repo.openPullRequest({ title: 'Denied' });

    await expect(
      host.startTestRun({ queueId: 'q1', repo: REF, targetBranch: 'main', runId: 'run1', baseSha: repo.branch('main')!, heads: [{ prNumber: n, headSha: repo.pullRequest(n).headSha }], requiredStatuses: ['ci'], mergeMethod: 'squash' }),
    ).rejects.toMatchObject({ status: 403 });
  });
});
