import nock from 'nock';
import { API, REPO, REPO_PATH, pullRequestJson, testHost, useNock } from './github-fixtures.js';

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
      url: 'https://github.com/Codertocat/Hello-World/pull/2',
      body: 'This is a pretty simple change that we need to pull into master.',
      readAt: new Date('2024-05-01T12:00:00Z'),
    });
    expect(scope.isDone()).toBe(true);
  });

  test.each([
    ['still computing', { mergeable: null, mergeable_state: 'unknown' }, 'in_progress'],
    ['clean', { mergeable: true, mergeable_state: 'clean' }, 'mergeable'],
    ['unstable (a non-required check fails)', { mergeable: true, mergeable_state: 'unstable' }, 'mergeable'],
    ['has_hooks', { mergeable: true, mergeable_state: 'has_hooks' }, 'mergeable'],
    ['blocked by protection or rulesets', { mergeable: true, mergeable_state: 'blocked' }, 'not_mergeable'],
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

  test('404: no such PR', async () => {
    const { host } = testHost();
    nock(API).get(`${REPO_PATH}/pulls/404`).reply(404, { message: 'Not Found' });
    expect(await host.readPullRequest(REPO, 404)).toBeNull();
  });

  test('other errors are thrown (the runner retries later)', async () => {
    const { host } = testHost();
    nock(API).get(`${REPO_PATH}/pulls/5`).reply(500, { message: 'boom' });
    await expect(host.readPullRequest(REPO, 5)).rejects.toMatchObject({ status: 500 });
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
