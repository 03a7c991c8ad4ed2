import nock from 'nock';
import { API, REPO, REPO_PATH, checkRunJson, commitStatusJson, queueRecord, testHost, testRunRecord, useNock } from './github-fixtures.js';

useNock();

const SHA = 'test1';

function checkRuns(...runs: Array<Record<string, unknown>>) {
  return { total_count: runs.length, check_runs: runs };
}
function combinedStatus(...statuses: Array<Record<string, unknown>>) {
  return { state: 'pending', sha: SHA, total_count: statuses.length, statuses, repository: {}, commit_url: '', url: '' };
}
function githubChecks(runs: Array<Record<string, unknown>>, statuses: Array<Record<string, unknown>> = []) {
  return nock(API)
    .get(`${REPO_PATH}/commits/${SHA}/check-runs`)
    .query({ filter: 'latest', per_page: 100, page: 1 })
    .reply(200, checkRuns(...runs))
    // Read only when check runs do not name every required check (see the test of that).
    .get(`${REPO_PATH}/commits/${SHA}/status`)
    .optionally()
    .query({ per_page: 100, page: 1 })
    .reply(200, combinedStatus(...statuses));
}
/** The test branch deleted (the queue opens no draft PRs for test branches, so none is looked for). */
function branchDeleted() {
  return nock(API)
    .delete(`${REPO_PATH}/git/refs/heads%2Fmq%2Fmain%2Frun1`)
    .reply(204);
}

describe('onCommitChecksChanged', () => {
  test('check runs name every required check: commit statuses are not even read (a request saved per look)', async () => {
    const { host } = testHost({ runs: [testRunRecord({ requiredStatuses: ['ci'] })] });
    const scope = nock(API)
      .get(`${REPO_PATH}/commits/${SHA}/check-runs`)
      .query(true)
      .reply(200, checkRuns(checkRunJson({ id: 1, name: 'ci', status: 'in_progress', conclusion: null })));
    expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('waiting');
    expect(scope.isDone()).toBe(true);
  });

  test('every required check and status succeeded: the run passed, is reported, and its branch deleted', async () => {
    const { host, finished, runs } = testHost({ runs: [testRunRecord({ requiredStatuses: ['Octocoders-linter', 'ci/jenkins'] })] });
    const checks = githubChecks(
      [checkRunJson({ id: 1, name: 'Octocoders-linter', status: 'completed', conclusion: 'success' }), checkRunJson({ id: 2, name: 'docs', status: 'completed', conclusion: 'failure' })],
      [commitStatusJson({ context: 'ci/jenkins', state: 'success', target_url: 'https://ci.example/1' })],
    );
    const cleanup = branchDeleted();

    expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('passed');

    expect(finished).toEqual([
      {
        queueId: 'q1',
        runId: 'run1',
        passed: true,
        failedChecks: [],
        checkRuns: [
          { name: 'Octocoders-linter', url: 'https://github.com/Codertocat/Hello-World/runs/128620228', status: 'completed', conclusion: 'success' },
          { name: 'docs', url: 'https://github.com/Codertocat/Hello-World/runs/128620228', status: 'completed', conclusion: 'failure' },
          { name: 'ci/jenkins', url: 'https://ci.example/1', status: 'completed', conclusion: 'success' },
        ],
      },
    ]);
    expect(runs[0]?.status).toBe('succeeded');
    expect(checks.isDone() && cleanup.isDone()).toBe(true);
  });

  test('skipped and neutral count as success, like branch protection', async () => {
    const { host, finished } = testHost({ runs: [testRunRecord({ requiredStatuses: ['build', 'lint'] })] });
    githubChecks([checkRunJson({ id: 1, name: 'build', conclusion: 'skipped' }), checkRunJson({ id: 2, name: 'lint', conclusion: 'neutral' })]);
    branchDeleted();
    expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('passed');
    expect(finished[0]?.passed).toBe(true);
  });

  test('a required check failed: failed, naming the failing checks', async () => {
    const { host, finished } = testHost({ runs: [testRunRecord({ requiredStatuses: ['Octocoders-linter', 'ci/jenkins', 'e2e'] })] });
    githubChecks(
      [checkRunJson({ id: 1, name: 'Octocoders-linter' }), checkRunJson({ id: 2, name: 'e2e', status: 'in_progress', conclusion: null })], // The example's run failed.
      [commitStatusJson({ context: 'ci/jenkins', state: 'error' })],
    );
    branchDeleted();
    expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('failed');
    expect(finished).toMatchObject([{ queueId: 'q1', runId: 'run1', passed: false, failedChecks: ['Octocoders-linter', 'ci/jenkins'] }]);
  });

  test('a required check still running, another not reported yet: keep waiting, nothing reported or deleted', async () => {
    const { host, finished } = testHost({ runs: [testRunRecord({ requiredStatuses: ['build', 'ci/jenkins', 'later'] })] });
    githubChecks([checkRunJson({ id: 1, name: 'build', status: 'in_progress', conclusion: null })], [commitStatusJson({ context: 'ci/jenkins', state: 'pending' })]);
    expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('waiting');
    expect(finished).toEqual([]);
  });

  test('reads every page of check runs', async () => {
    const { host } = testHost({ runs: [testRunRecord({ requiredStatuses: ['check-100'] })] });
    const page1 = Array.from({ length: 100 }, (_, i) => checkRunJson({ id: i + 1, name: `check-${i}`, conclusion: 'success' }));
    nock(API)
      .get(`${REPO_PATH}/commits/${SHA}/check-runs`)
      .query({ filter: 'latest', per_page: 100, page: 1 })
      .reply(200, checkRuns(...page1))
      .get(`${REPO_PATH}/commits/${SHA}/check-runs`)
      .query({ filter: 'latest', per_page: 100, page: 2 })
      .reply(200, checkRuns(checkRunJson({ id: 101, name: 'check-100', conclusion: 'success' })));
    branchDeleted();
    expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('passed');
  });

  test('a sha no run is testing: nothing is read', async () => {
    const { host } = testHost({ runs: [testRunRecord({ testBranchSha: 'other' })] });
    expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('no_run');
  });

  test("the same sha in another repository (a fork) never decides the queue's run", async () => {
    const { host, log } = testHost({ runs: [testRunRecord()] });
    expect(await host.onCommitChecksChanged({ ...REPO, owner: 'forker' }, SHA)).toBe('no_run');
    expect(log.entries.map((e) => e.message)).toContain('checks reported for a test branch sha from another repository; ignored');
  });

  test('no required statuses recorded: never passes', async () => {
    const { host } = testHost({ runs: [testRunRecord({ requiredStatuses: [] })] });
    expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('waiting');
  });

  test('a burst of webhooks for one sha reports the run once', async () => {
    const { host, finished } = testHost({ runs: [testRunRecord({ requiredStatuses: ['build'] })] });
    githubChecks([checkRunJson({ id: 1, name: 'build', conclusion: 'success' })]);
    branchDeleted();
    const outcomes = await Promise.all([host.onCommitChecksChanged(REPO, SHA), host.onCommitChecksChanged(REPO, SHA)]);
    expect(outcomes).toEqual(['passed', 'no_run']);
    expect(finished).toHaveLength(1);
  });
});

describe('reconcile', () => {
  test("looks at every run in progress on this host's repositories", async () => {
    const sandboxQueue = queueRecord({ id: 'q2', repo: { host: 'sandbox', owner: 'demo', name: 'r' } });
    const { host, finished } = testHost({
      queues: [queueRecord(), sandboxQueue],
      runs: [testRunRecord({ requiredStatuses: ['build'] }), testRunRecord({ id: 'run2', queueId: 'q2', testBranchSha: 'sandbox-sha' }), testRunRecord({ id: 'run3', testBranchSha: null })],
    });
    githubChecks([checkRunJson({ id: 1, name: 'build', conclusion: 'success' })]);
    branchDeleted();
    await host.reconcile();
    expect(finished.map((f) => f.runId)).toEqual(['run1']);
  });
});

describe('cancelTestRun', () => {
  test("deletes the run's test branch and closes its draft PR", async () => {
    const { host } = testHost();
    const scope = nock(API)
      .get(`${REPO_PATH}/git/matching-refs/heads%2Fmq%2F`)
      .reply(200, [{ ref: 'refs/heads/mq/main/run10', object: { sha: 'a' } }, { ref: 'refs/heads/mq/release/1.x/run1', object: { sha: 'b' } }])
      .get(`${REPO_PATH}/pulls`)
      .query({ head: 'Codertocat:mq/release/1.x/run1', state: 'open' })
      .reply(200, [{ number: 99 }])
      .patch(`${REPO_PATH}/pulls/99`, { state: 'closed' })
      .reply(200, {})
      .delete(`${REPO_PATH}/git/refs/heads%2Fmq%2Frelease%2F1.x%2Frun1`)
      .reply(422, { message: 'Reference does not exist' }); // Already gone: fine.
    await host.cancelTestRun(REPO, 'run1');
    expect(scope.isDone()).toBe(true);
  });
});

// A required check the branch's policy binds to one App (found by a security review: matched by name only, a result
// anyone posted under the name passed the run).
describe('required checks bound to one App', () => {
  const APP = 42;
  const bound = { requiredStatuses: ['ci'], requiredCheckApps: [{ name: 'ci', appId: APP }] };

  test("a check run of the name from another App does not count; the bound App's own run still decides", async () => {
    const { host } = testHost({ runs: [testRunRecord(bound)] });
    const scope = githubChecks([checkRunJson({ id: 9, name: 'ci', status: 'completed', conclusion: 'success', app: { id: 7, slug: 'intruder' } }), checkRunJson({ id: 3, name: 'ci', status: 'in_progress', conclusion: null, app: { id: APP, slug: 'ci-app' } })]);
    expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('waiting');
    expect(scope.isDone()).toBe(true);
  });

  test("a commit status counts only when the bound App's bot created it: the latest such status decides", async () => {
    const { host, finished } = testHost({ runs: [testRunRecord(bound)] });
    const status = (id: number, state: string, login: string, type: string) => ({ ...commitStatusJson({ id, context: 'ci', state }), creator: { login, id: 100 + id, type } });
    const scope = githubChecks([], [commitStatusJson({ context: 'ci', state: 'success' })])
      .get(`${REPO_PATH}/commits/${SHA}/statuses`)
      .query({ per_page: 100, page: 1 })
      .reply(200, [status(3, 'success', 'mallory', 'User'), status(2, 'success', 'other-app[bot]', 'Bot'), status(1, 'failure', 'ci-app[bot]', 'Bot')])
      .get('/apps/other-app')
      .reply(200, { id: 7, slug: 'other-app' })
      .get('/apps/ci-app')
      .reply(200, { id: APP, slug: 'ci-app' });
    // The bound App said failure: the run fails, whoever else said success.
    expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('failed');
    expect(finished).toEqual([expect.objectContaining({ passed: false, failedChecks: ['ci'] })]);
    expect(scope.isDone()).toBe(true);
  });

  // Found by review: only the first 100 statuses were read.
  test("the commit's statuses are read page by page until the bound App's status of the name is found", async () => {
    const { host, finished } = testHost({ runs: [testRunRecord(bound)] });
    const status = (id: number, context: string, state: string, login: string) => ({ ...commitStatusJson({ id, context, state }), creator: { login, id: 100 + id, type: 'Bot' } });
    const noise = Array.from({ length: 100 }, (_, i) => status(1_000 + i, `lint-${i}`, 'success', 'lint-bot[bot]'));
    const scope = githubChecks([], [commitStatusJson({ context: 'ci', state: 'success' })])
      .get(`${REPO_PATH}/commits/${SHA}/statuses`)
      .query({ per_page: 100, page: 1 })
      .reply(200, noise)
      .get(`${REPO_PATH}/commits/${SHA}/statuses`)
      .query({ per_page: 100, page: 2 })
      .reply(200, [status(1, 'ci', 'success', 'ci-app[bot]')])
      // Known already when an earlier test asked (an App's id never changes: kept for the process).
      .get('/apps/ci-app')
      .optionally()
      .reply(200, { id: APP, slug: 'ci-app' });
    expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('passed');
    expect(finished).toEqual([expect.objectContaining({ passed: true })]);
    expect(scope.isDone()).toBe(true);
  });

  // Found by review: protection binding a name to one App and a ruleset binding it to another, either App's result
  // passed the run; GitHub wants both.
  describe('a name bound to two Apps', () => {
    const OTHER = 43;
    const both = { requiredStatuses: ['ci'], requiredCheckApps: [{ name: 'ci', appId: APP }, { name: 'ci', appId: OTHER }] };
    const run = (id: number, appId: number, status: string, conclusion: string | null) => checkRunJson({ id, name: 'ci', status, conclusion, app: { id: appId, slug: `app-${appId}` } });

    test('a success from one App waits for the other; a failure of either fails; both succeeded passes', async () => {
      const cases: Array<[Array<Record<string, unknown>>, string]> = [
        [[run(5, APP, 'completed', 'success')], 'waiting'],
        [[run(5, APP, 'completed', 'success'), run(6, OTHER, 'in_progress', null)], 'waiting'],
        [[run(5, APP, 'completed', 'success'), run(6, OTHER, 'completed', 'failure')], 'failed'],
        [[run(5, APP, 'completed', 'success'), run(6, OTHER, 'completed', 'success')], 'passed'],
      ];
      for (const [runs, verdict] of cases) {
        const { host } = testHost({ runs: [testRunRecord(both)] });
        githubChecks(runs);
        expect([runs.length, await host.onCommitChecksChanged(REPO, SHA)]).toEqual([runs.length, verdict]);
        nock.cleanAll();
      }
    });

    test('each App reporting a check run of the name: no commit status is read (a request saved per look)', async () => {
      const { host } = testHost({ runs: [testRunRecord(both)] });
      const scope = nock(API)
        .get(`${REPO_PATH}/commits/${SHA}/check-runs`)
        .query(true)
        .reply(200, checkRuns(run(5, APP, 'completed', 'success'), run(6, OTHER, 'completed', 'success')));
      expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('passed');
      expect(scope.isDone()).toBe(true);
    });

    // Found by review: one App reporting a check run and the other a status never passed, and every PR timed out.
    test('one App reports a check run, the other a commit status: both succeeded passes; the status failing fails; no status waits', async () => {
      const status = (state: string) => ({ ...commitStatusJson({ id: 2, context: 'ci', state }), creator: { login: 'app-b[bot]', id: 102, type: 'Bot' } });
      const cases: Array<[string | null, string]> = [
        ['success', 'passed'],
        ['failure', 'failed'],
        [null, 'waiting'],
      ];
      for (const [state, verdict] of cases) {
        const { host } = testHost({ runs: [testRunRecord(both)] });
        const scope = githubChecks([run(5, APP, 'completed', 'success')], state ? [commitStatusJson({ context: 'ci', state })] : []);
        if (state) {
          scope
            .get(`${REPO_PATH}/commits/${SHA}/statuses`)
            .query({ per_page: 100, page: 1 })
            .reply(200, [status(state)])
            .get('/apps/app-b')
            .optionally()
            .reply(200, { id: OTHER, slug: 'app-b' });
        }
        expect([state, await host.onCommitChecksChanged(REPO, SHA)]).toEqual([state, verdict]);
        nock.cleanAll();
      }
    });

    test("commit statuses: each App's latest status counts; a success from one App and a failure from the other fails", async () => {
      const { host, finished } = testHost({ runs: [testRunRecord(both)] });
      const status = (id: number, state: string, login: string) => ({ ...commitStatusJson({ id, context: 'ci', state }), creator: { login, id: 100 + id, type: 'Bot' } });
      const scope = githubChecks([], [commitStatusJson({ context: 'ci', state: 'success' })])
        .get(`${REPO_PATH}/commits/${SHA}/statuses`)
        .query({ per_page: 100, page: 1 })
        .reply(200, [status(3, 'success', 'app-a[bot]'), status(2, 'failure', 'app-b[bot]')])
        .get('/apps/app-a')
        .reply(200, { id: APP, slug: 'app-a' })
        // Known already when the test above asked (an App's id never changes: kept for the process).
        .get('/apps/app-b')
        .optionally()
        .reply(200, { id: OTHER, slug: 'app-b' });
      expect(await host.onCommitChecksChanged(REPO, SHA)).toBe('failed');
      expect(finished).toEqual([expect.objectContaining({ passed: false, failedChecks: ['ci'] })]);
      expect(scope.isDone()).toBe(true);
    });
  });
});
