import nock from 'nock';
import { AppNotInstalledError } from '../../src/adapters/github/installation-octokits.js';
import { isTransientHostError } from '../../src/ports/host-errors.js';
import { API, REPO, REPO_PATH, checkRunJson, commitStatusJson, pullRequestJson, testHost, useNock } from './github-fixtures.js';

useNock();

describe('readPullRequest', () => {
  test('maps GitHub pull request JSON (from the pull_request.opened payload) to facts', async () => {
    const { host } = testHost();
    const scope = nock(API).get(`${REPO_PATH}/pulls/2`).matchHeader('authorization', 'token test-token').reply(200, pullRequestJson());
    const facts = await host.readPullRequest(REPO, 2);
    expect(facts).toEqual({
      title: 'Update the README with new information.',
      author: 'Codertocat',
      headSha: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821',
      baseBranch: 'master',
      open: true,
      draft: false,
      merged: false,
      mergeability: 'in_progress', // The example has mergeable: null, GitHub still computing.
      changedFiles: 1, // GitHub's changed_files: the queue learns the risk of each size.
      labels: [], // The example has none; names are lower-cased (a PR queued by its label leaves without it).
      url: 'https://github.com/Codertocat/Hello-World/pull/2',
      body: 'This is a pretty simple change that we need to pull into master.',
      readAt: new Date('2024-05-01T12:00:00Z'),
    });
    expect(scope.isDone()).toBe(true);
  });

  test("its labels' names, lower-cased (GitHub compares label names without case)", async () => {
    const { host } = testHost();
    nock(API).get(`${REPO_PATH}/pulls/2`).reply(200, { ...pullRequestJson(), labels: [{ id: 1, name: 'Merge-Queue', color: 'fff', default: false }, { id: 2, name: 'bug', color: 'f00', default: true }] });
    expect((await host.readPullRequest(REPO, 2))?.labels).toEqual(['merge-queue', 'bug']);
  });

  test.each([
    ['still computing', { mergeable: null, mergeable_state: 'unknown' }, 'in_progress'],
    ['clean', { mergeable: true, mergeable_state: 'clean' }, 'mergeable'],
    ['unstable (a non-required check fails)', { mergeable: true, mergeable_state: 'unstable' }, 'mergeable'],
    ['has_hooks', { mergeable: true, mergeable_state: 'has_hooks' }, 'mergeable'],
    ['conflicting', { mergeable: false, mergeable_state: 'dirty' }, 'not_mergeable'],
    ['mergeable but state unknown yet', { mergeable: true, mergeable_state: 'unknown' }, 'in_progress'],
    ['closed: never computed', { state: 'closed', mergeable: null, mergeable_state: 'unknown' }, 'unspecified'],
    ['merged', { state: 'closed', merged: true, mergeable: null }, 'unspecified'],
  ])('mergeability: %s', async (_name, change, mergeability) => {
    const { host } = testHost();
    nock(API).get(`${REPO_PATH}/pulls/7`).reply(200, pullRequestJson({ number: 7, ...change }));
    expect((await host.readPullRequest(REPO, 7))?.mergeability).toBe(mergeability);
  });

  test('a draft, a merged PR', async () => {
    const { host } = testHost();
    nock(API)
      .get(`${REPO_PATH}/pulls/3`)
      .reply(200, pullRequestJson({ number: 3, draft: true }))
      .get(`${REPO_PATH}/pulls/4`)
      .reply(200, pullRequestJson({ number: 4, state: 'closed', merged: true, body: null }));
    expect(await host.readPullRequest(REPO, 3)).toMatchObject({ draft: true, open: true });
    const merged = await host.readPullRequest(REPO, 4);
    expect(merged).toMatchObject({ open: false, merged: true });
    expect(merged).not.toHaveProperty('body');
  });

  test('the number of files changed, when GitHub says it (list answers leave it out)', async () => {
    const { host } = testHost();
    const { changed_files: _files, ...withoutCount } = pullRequestJson({ number: 9 }) as Record<string, unknown>;
    nock(API).get(`${REPO_PATH}/pulls/8`).reply(200, pullRequestJson({ number: 8, changed_files: 37 })).get(`${REPO_PATH}/pulls/9`).reply(200, withoutCount);
    expect((await host.readPullRequest(REPO, 8))?.changedFiles).toBe(37);
    expect(await host.readPullRequest(REPO, 9)).not.toHaveProperty('changedFiles');
  });

  test('404 in a repository the App sees: no such PR', async () => {
    const { host } = testHost();
    const scope = nock(API).get(`${REPO_PATH}/pulls/404`).reply(404, { message: 'Not Found' }).get(REPO_PATH).reply(200, { id: 1, name: 'repo' });
    expect(await host.readPullRequest(REPO, 404)).toBeNull();
    expect(scope.isDone()).toBe(true);
  });

  // Found by review: GitHub answers 404 for what the token may not see. A PR is never deleted, and its PRs were taken
  // for closed (cancelled) when the repository was taken out of the App's installation.
  test('404 on the repository too: the App lost access, an outage (thrown without a status, retried), not a closed PR', async () => {
    const { host } = testHost();
    nock(API).get(`${REPO_PATH}/pulls/7`).reply(404, { message: 'Not Found' }).get(REPO_PATH).reply(404, { message: 'Not Found' });
    const error = await host.readPullRequest(REPO, 7).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppNotInstalledError);
    expect(isTransientHostError(error)).toBe(true);
  });

  test('other errors are thrown (the runner retries later)', async () => {
    const { host } = testHost();
    nock(API).get(`${REPO_PATH}/pulls/5`).reply(500, { message: 'boom' });
    await expect(host.readPullRequest(REPO, 5)).rejects.toMatchObject({ status: 500 });
  });
});

describe("readPullRequest: GitHub's `blocked`, told apart", () => {
  const HEAD = 'ec26c3e57ca3a959ca5aad62de7213c562f8c821';
  const blocked = () => pullRequestJson({ number: 8, mergeable: true, mergeable_state: 'blocked' });
  /** master requires `ci/test` by protection and `lint` by a ruleset. */
  function policy(scope: nock.Scope, protectedBranch = true): nock.Scope {
    return scope
      .get(`${REPO_PATH}/branches/master/protection`)
      .reply(protectedBranch ? 200 : 404, protectedBranch ? { required_status_checks: { strict: false, contexts: ['ci/test'], checks: [] } } : { message: 'Branch not protected' })
      .get(`${REPO_PATH}/rules/branches/master`)
      .query(true)
      .reply(200, protectedBranch ? [{ type: 'required_status_checks', parameters: { required_status_checks: [{ context: 'lint' }] } }] : []);
  }
  const checks = (runs: object[]) => ({ total_count: runs.length, check_runs: runs });

  test('a required check of the head still running: not mergeable, but only until its checks report', async () => {
    const { host } = testHost();
    const scope = policy(nock(API).get(`${REPO_PATH}/pulls/8`).reply(200, blocked()))
      .get(`${REPO_PATH}/commits/${HEAD}/check-runs`)
      .query(true)
      .reply(200, checks([checkRunJson({ id: 1, name: 'ci/test', status: 'in_progress', conclusion: null }), checkRunJson({ id: 2, name: 'lint', status: 'completed', conclusion: 'success' })]));
    expect(await host.readPullRequest(REPO, 8)).toMatchObject({ mergeability: 'not_mergeable', checksPending: true });
    expect(scope.isDone()).toBe(true);
  });

  test('a required check never reported yet (a status expected): waiting too', async () => {
    const { host } = testHost();
    policy(nock(API).get(`${REPO_PATH}/pulls/8`).reply(200, blocked()))
      .get(`${REPO_PATH}/commits/${HEAD}/check-runs`)
      .query(true)
      .reply(200, checks([checkRunJson({ id: 2, name: 'lint', status: 'completed', conclusion: 'success' })]))
      .get(`${REPO_PATH}/commits/${HEAD}/status`)
      .query(true)
      .reply(200, { state: 'pending', statuses: [commitStatusJson({ context: 'ci/test', state: 'pending' })] });
    expect(await host.readPullRequest(REPO, 8)).toMatchObject({ mergeability: 'not_mergeable', checksPending: true });
  });

  test('a required check failed: a real block', async () => {
    const { host } = testHost();
    policy(nock(API).get(`${REPO_PATH}/pulls/8`).reply(200, blocked()))
      .get(`${REPO_PATH}/commits/${HEAD}/check-runs`)
      .query(true)
      .reply(200, checks([checkRunJson({ id: 1, name: 'ci/test', status: 'completed', conclusion: 'failure' }), checkRunJson({ id: 2, name: 'lint', status: 'in_progress', conclusion: null })]));
    const facts = await host.readPullRequest(REPO, 8);
    expect(facts?.mergeability).toBe('not_mergeable');
    expect(facts).not.toHaveProperty('checksPending');
  });

  test('every required check passed (a review is missing), or none required: a real block', async () => {
    const { host } = testHost();
    policy(nock(API).get(`${REPO_PATH}/pulls/8`).reply(200, blocked()))
      .get(`${REPO_PATH}/commits/${HEAD}/check-runs`)
      .query(true)
      .reply(200, checks([checkRunJson({ id: 1, name: 'ci/test', status: 'completed', conclusion: 'success' }), checkRunJson({ id: 2, name: 'lint', status: 'completed', conclusion: 'success' })]));
    expect(await host.readPullRequest(REPO, 8)).not.toHaveProperty('checksPending');
    // No check required at all (another service: its rules are its own): nothing else is read.
    const scope = policy(nock(API).get(`${REPO_PATH}/pulls/8`).reply(200, blocked()), false);
    const facts = await testHost().host.readPullRequest(REPO, 8);
    expect(facts).toMatchObject({ mergeability: 'not_mergeable' });
    expect(facts).not.toHaveProperty('checksPending');
    expect(scope.isDone()).toBe(true);
  });

  describe('reviews: the queue lands by moving the branch, so a block for a review must stand', () => {
    /** master requires `ci/test` and one approval (classic protection), plus `more` on it. */
    function reviewPolicy(scope: nock.Scope, more: Record<string, unknown> = {}): nock.Scope {
      return scope
        .get(`${REPO_PATH}/branches/master/protection`)
        .reply(200, { required_status_checks: { strict: false, contexts: ['ci/test'], checks: [] }, required_pull_request_reviews: { required_approving_review_count: 1, ...more } })
        .get(`${REPO_PATH}/rules/branches/master`)
        .query(true)
        .reply(200, []);
    }
    const running = () => checks([checkRunJson({ id: 1, name: 'ci/test', status: 'in_progress', conclusion: null })]);
    const review = (login: string, state: string, association = 'MEMBER') => ({ id: 1, user: { login }, state, author_association: association, body: '', commit_id: HEAD, submitted_at: '2024-05-01T12:00:00Z' });
    /** The facts read; the head's checks are read only once the reviews pass (`checksRead`). */
    async function judge(reviews: object[], checksRead = false) {
      const { host } = testHost();
      const scope = reviewPolicy(nock(API).get(`${REPO_PATH}/pulls/8`).reply(200, blocked()))
        .get(`${REPO_PATH}/pulls/8/reviews`)
        .query(true)
        .reply(200, reviews);
      const checks = nock(API).get(`${REPO_PATH}/commits/${HEAD}/check-runs`).query(true).reply(200, running());
      const facts = await host.readPullRequest(REPO, 8);
      expect(scope.isDone()).toBe(true);
      expect(checks.isDone()).toBe(checksRead);
      nock.cleanAll();
      return facts;
    }

    test('approved, a required check running: waiting for its checks', async () => {
      expect(await judge([review('writer', 'APPROVED')], true)).toMatchObject({ mergeability: 'not_mergeable', checksPending: true });
    });

    test("a reviewer's latest word a request for changes (after an approval of another): a real block", async () => {
      expect(await judge([review('writer', 'APPROVED'), review('other', 'APPROVED'), review('other', 'CHANGES_REQUESTED')])).not.toHaveProperty('checksPending');
    });

    test("a request for changes from someone without write access blocks nothing GitHub blocks on: waiting for its checks (found by review: it demoted the PR)", async () => {
      expect(await judge([review('writer', 'APPROVED'), review('drive-by', 'CHANGES_REQUESTED', 'CONTRIBUTOR')], true)).toMatchObject({ mergeability: 'not_mergeable', checksPending: true });
      // A member's or collaborator's counts whatever their access (the association does not say it).
      expect(await judge([review('writer', 'APPROVED'), review('member', 'CHANGES_REQUESTED', 'MEMBER')])).not.toHaveProperty('checksPending');
    });

    test('no approval that counts (none, or only from someone without write access): a real block', async () => {
      expect(await judge([])).not.toHaveProperty('checksPending');
      expect(await judge([review('drive-by', 'APPROVED', 'CONTRIBUTOR'), review('writer', 'COMMENTED')])).not.toHaveProperty('checksPending');
    });

    test("the branch's rules are read once a minute, not for every blocked PR read", async () => {
      const { host } = testHost();
      const policy = reviewPolicy(nock(API));
      const reads = nock(API)
        .get(`${REPO_PATH}/pulls/8`)
        .times(2)
        .reply(200, blocked())
        .get(`${REPO_PATH}/pulls/8/reviews`)
        .query(true)
        .times(2)
        .reply(200, [review('writer', 'APPROVED')])
        .get(`${REPO_PATH}/commits/${HEAD}/check-runs`)
        .query(true)
        .times(2)
        .reply(200, running());
      for (let i = 0; i < 2; i++) expect(await host.readPullRequest(REPO, 8)).toMatchObject({ checksPending: true });
      expect(policy.isDone()).toBe(true);
      expect(reads.isDone()).toBe(true);
    });

    test('rules the queue cannot judge from REST (code owners, last-push approval): a real block, read no further', async () => {
      for (const more of [{ require_code_owner_reviews: true }, { require_last_push_approval: true }]) {
        const { host } = testHost();
        const scope = reviewPolicy(nock(API).get(`${REPO_PATH}/pulls/8`).reply(200, blocked()), more);
        expect(await host.readPullRequest(REPO, 8)).not.toHaveProperty('checksPending');
        expect(scope.isDone()).toBe(true);
      }
    });

    test('a ruleset asking for approvals, or with a rule the queue does not judge: the same', async () => {
      for (const [rule, readsOn] of [
        [{ type: 'pull_request', parameters: { required_approving_review_count: 2 } }, true],
        [{ type: 'required_signatures' }, false],
      ] as const) {
        const { host } = testHost();
        let scope = nock(API)
          .get(`${REPO_PATH}/pulls/8`)
          .reply(200, blocked())
          .get(`${REPO_PATH}/branches/master/protection`)
          .reply(404, { message: 'Branch not protected' })
          .get(`${REPO_PATH}/rules/branches/master`)
          .query(true)
          .reply(200, [{ type: 'required_status_checks', parameters: { required_status_checks: [{ context: 'ci/test' }] } }, rule]);
        if (readsOn) scope = scope.get(`${REPO_PATH}/pulls/8/reviews`).query(true).reply(200, [review('writer', 'APPROVED')]);
        expect(await host.readPullRequest(REPO, 8)).not.toHaveProperty('checksPending');
        expect(scope.isDone()).toBe(true);
      }
    });
  });

  test('other states read nothing more', async () => {
    const { host } = testHost();
    const scope = nock(API).get(`${REPO_PATH}/pulls/8`).reply(200, pullRequestJson({ number: 8, mergeable: false, mergeable_state: 'dirty' }));
    expect(await host.readPullRequest(REPO, 8)).toMatchObject({ mergeability: 'not_mergeable' });
    expect(scope.isDone()).toBe(true);
  });
});

describe('readBranchHead', () => {
  test('the sha of the branch ref', async () => {
    const { host } = testHost();
    nock(API)
      .get(`${REPO_PATH}/git/ref/heads%2Frelease%2F1.0`)
      .reply(200, { ref: 'refs/heads/release/1.0', object: { sha: 'f95f852bd8fca8fcc58a9a2d6c842781e32a215e', type: 'commit' } });
    expect(await host.readBranchHead(REPO, 'release/1.0')).toBe('f95f852bd8fca8fcc58a9a2d6c842781e32a215e');
  });

  test('404: no such branch', async () => {
    const { host } = testHost();
    nock(API).get(`${REPO_PATH}/git/ref/heads%2Fgone`).reply(404, { message: 'Not Found' });
    expect(await host.readBranchHead(REPO, 'gone')).toBeNull();
  });
});
