import { generateKeyPairSync } from 'node:crypto';
import nock from 'nock';
import { pino } from 'pino';
import { Probot } from 'probot';
import { createGitHubOctokit, installationOctokits, probotAppAuth, queueProbotOctokit, AppNotInstalledError, GitHubHost, InstallationTokenRefusedError } from '../../src/adapters/github/index.js';
import { NOT_REPEATED_BLIND } from '../../src/adapters/github/github-client.js';
import { isTransientHostError } from '../../src/ports/host-errors.js';
import { API, REPO, REPO_PATH, recordingLog, useNock } from './github-fixtures.js';

useNock();

const SECONDARY = { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' };
const REF = { ref: 'refs/heads/main', object: { sha: 'f95f852bd8fca8fcc58a9a2d6c842781e32a215e', type: 'commit' } };
/** GitHub's answer to an installation token request: a token valid for an hour. */
const installationToken = (token: string) => ({ token, expires_at: new Date(Date.now() + 3600_000).toISOString(), permissions: {}, repository_selection: 'all' });

describe('createGitHubOctokit: back off instead of failing', () => {
  test('a 5xx is retried with back-off, and each retry is logged', async () => {
    const log = recordingLog();
    const client = createGitHubOctokit({ auth: 'test-token', baseUrl: API, log, unitMs: 1 });
    const scope = nock(API).get(`${REPO_PATH}/git/ref/heads%2Fmain`).reply(502, 'Bad Gateway').get(`${REPO_PATH}/git/ref/heads%2Fmain`).reply(503, {}).get(`${REPO_PATH}/git/ref/heads%2Fmain`).reply(200, REF);
    const response = await client.request('GET /repos/{owner}/{repo}/git/ref/{ref}', { owner: REPO.owner, repo: REPO.name, ref: 'heads/main' });
    expect(response.data).toEqual(REF);
    expect(scope.isDone()).toBe(true);
    expect(log.entries.filter((e) => e.message === 'GitHub request failed; retrying with back-off').map((e) => e.details)).toEqual([
      expect.objectContaining({ method: 'GET', status: 502, attempt: 1, retries: 3 }),
      expect.objectContaining({ method: 'GET', status: 503, attempt: 2, retries: 3 }),
    ]);
  });

  test('after its retries a 5xx fails', async () => {
    const log = recordingLog();
    const client = createGitHubOctokit({ auth: 'test-token', baseUrl: API, log, unitMs: 1, retries: 2 });
    nock(API).get(`${REPO_PATH}/pulls/2`).times(3).reply(500, { message: 'boom' });
    await expect(client.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { owner: REPO.owner, repo: REPO.name, pull_number: 2 })).rejects.toMatchObject({ status: 500 });
    expect(log.entries.filter((e) => e.message.startsWith('GitHub request failed'))).toHaveLength(2);
  });

  test.each([405, 409])('a %i (a refused merge, a merge conflict) is an answer: not retried', async (status) => {
    const log = recordingLog();
    const client = createGitHubOctokit({ auth: 'test-token', baseUrl: API, log, unitMs: 1 });
    const scope = nock(API).post(`${REPO_PATH}/merges`).reply(status, { message: 'Merge conflict' });
    await expect(client.request('POST /repos/{owner}/{repo}/merges', { owner: REPO.owner, repo: REPO.name, base: 'b', head: 'h' })).rejects.toMatchObject({ status });
    expect(scope.isDone()).toBe(true);
    expect(log.entries.filter((e) => e.message.startsWith('GitHub request failed'))).toEqual([]);
  });

  test('a secondary rate limit waits for retry-after and tries again', async () => {
    const log = recordingLog();
    const client = createGitHubOctokit({ auth: 'test-token', baseUrl: API, log, unitMs: 1 });
    const scope = nock(API).get(`${REPO_PATH}/git/ref/heads%2Fmain`).reply(403, SECONDARY, { 'retry-after': '2' }).get(`${REPO_PATH}/git/ref/heads%2Fmain`).reply(200, REF);
    const response = await client.request('GET /repos/{owner}/{repo}/git/ref/{ref}', { owner: REPO.owner, repo: REPO.name, ref: 'heads/main' });
    expect(response.data).toEqual(REF);
    expect(scope.isDone()).toBe(true);
    expect(log.entries).toContainEqual(expect.objectContaining({ level: 'warn', message: 'GitHub secondary rate limit hit', details: expect.objectContaining({ retryAfterSeconds: 2, retrying: true }) }));
  });

  test('a primary rate limit (x-ratelimit-remaining: 0) waits for the reset', async () => {
    const log = recordingLog();
    const client = createGitHubOctokit({ auth: 'test-token', baseUrl: API, log, unitMs: 1 });
    const reset = String(Math.floor(Date.now() / 1000));
    nock(API)
      .get(`${REPO_PATH}/git/ref/heads%2Fmain`)
      .reply(403, { message: 'API rate limit exceeded' }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset })
      .get(`${REPO_PATH}/git/ref/heads%2Fmain`)
      .reply(200, REF);
    await client.request('GET /repos/{owner}/{repo}/git/ref/{ref}', { owner: REPO.owner, repo: REPO.name, ref: 'heads/main' });
    expect(log.entries.some((e) => e.message === 'GitHub primary rate limit hit')).toBe(true);
  });
});

describe('through Probot: installation Octokits with the same back-off', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });

  function probot(log = recordingLog()) {
    return new Probot({ appId: 123, privateKey, secret: 'webhook-secret', log: pino({ level: 'silent' }), Octokit: queueProbotOctokit(log, { unitMs: 1 }) });
  }

  test("probot.auth(installationId) for the repository's installation; secondary limits and 5xx are retried", async () => {
    const log = recordingLog();
    const octokits = installationOctokits(probotAppAuth(probot(log)));
    const scope = nock(API)
      .get(`${REPO_PATH}/installation`)
      .matchHeader('authorization', /^bearer /)
      .reply(200, { id: 42, account: { login: REPO.owner } })
      .post('/app/installations/42/access_tokens')
      .reply(201, installationToken('ghs_installation'))
      .get(`${REPO_PATH}/git/ref/heads%2Fmain`)
      .matchHeader('authorization', 'token ghs_installation')
      .reply(403, SECONDARY, { 'retry-after': '1' })
      .get(`${REPO_PATH}/git/ref/heads%2Fmain`)
      .reply(502, 'Bad Gateway')
      .get(`${REPO_PATH}/git/ref/heads%2Fmain`)
      .matchHeader('authorization', 'token ghs_installation')
      .reply(200, REF);
    const host = new GitHubHost({
      octokitFor: octokits.octokitFor,
      events: () => {
        throw new Error('not used');
      },
      testRuns: { findInProgressByTestBranchSha: async () => null, listInProgress: async () => [], findById: async () => null },
      queues: { find: async () => null, findById: async () => null },
      log,
    });

    expect(await host.readBranchHead(REPO, 'main')).toBe(REF.object.sha);
    expect(scope.isDone()).toBe(true);
    expect(log.entries.map((e) => e.message)).toEqual(expect.arrayContaining(['GitHub secondary rate limit hit', 'GitHub request failed; retrying with back-off']));

    // The installation and its Octokit are remembered: no second lookup, no second token.
    nock(API).get(`${REPO_PATH}/git/ref/heads%2Fmain`).matchHeader('authorization', 'token ghs_installation').reply(200, REF);
    expect(await host.readBranchHead(REPO, 'main')).toBe(REF.object.sha);
  });

  test('an app not installed on the repository says so; the failure is not remembered', async () => {
    const octokits = installationOctokits(probotAppAuth(probot()));
    nock(API).get(`${REPO_PATH}/installation`).twice().reply(404, { message: 'Not Found' });
    await expect(octokits.octokitFor(REPO)).rejects.toBeInstanceOf(AppNotInstalledError);
    await expect(octokits.octokitFor(REPO)).rejects.toThrow('The GitHub App is not installed on Codertocat/Hello-World');
  });

  test.each([
    [403, 'This installation has been suspended'],
    [404, 'Not Found'],
  ])('a token refused (%i %s: suspended, or uninstalled with its id kept) is an outage, not a refusal; the id is asked again next time', async (status, message) => {
    const octokits = installationOctokits(probotAppAuth(probot()));
    octokits.remember(REPO, 7);
    nock(API).post('/app/installations/7/access_tokens').reply(status, { message });
    const client = await octokits.octokitFor(REPO);
    const refused = await client.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { owner: REPO.owner, repo: REPO.name, pull_number: 2 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InstallationTokenRefusedError);
    // No HTTP status of its own: the runner retries it with back-off and reports the host unavailable.
    expect(isTransientHostError(refused)).toBe(true);
    expect(String((refused as Error).message)).toContain(message);
    // Installed again (a new id) or unsuspended: the next action finds it and goes through.
    nock(API)
      .get(`${REPO_PATH}/installation`)
      .reply(200, { id: 8, account: { login: REPO.owner } })
      .post('/app/installations/8/access_tokens')
      .reply(201, installationToken('ghs_eight'))
      .get(`${REPO_PATH}/pulls/2`)
      .matchHeader('authorization', 'token ghs_eight')
      .reply(200, { number: 2 });
    const again = await octokits.octokitFor(REPO);
    expect((await again.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { owner: REPO.owner, repo: REPO.name, pull_number: 2 })).data).toEqual({ number: 2 });
  });

  test('a token GitHub no longer takes (401: revoked as the App was uninstalled or suspended) is an outage too, and the installation is asked again', async () => {
    // Stand-ins for the App's Octokits (Probot's own would first ask again for seconds after making a token).
    const lookups: number[] = [];
    const auth = {
      appOctokit: async () => ({ request: async () => (lookups.push(9), { status: 200, data: { id: 9 } }) }),
      installationOctokit: async (id: number) => ({
        request: async () => {
          if (id === 7) throw Object.assign(new Error('Bad credentials'), { status: 401 });
          return { status: 200, data: { number: 2, via: id } };
        },
      }),
    };
    const octokits = installationOctokits(auth);
    octokits.remember(REPO, 7);
    const refused = await (await octokits.octokitFor(REPO)).request('GET /repos/{owner}/{repo}/pulls/{pull_number}').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InstallationTokenRefusedError);
    expect(isTransientHostError(refused)).toBe(true);
    expect(String((refused as Error).message)).toContain('Bad credentials');
    // The kept installation is forgotten: the next action asks which it is now (installed again: 9).
    const again = await (await octokits.octokitFor(REPO)).request('GET /repos/{owner}/{repo}/pulls/{pull_number}');
    expect(again.data).toEqual({ number: 2, via: 9 });
    expect(lookups).toEqual([9]);
  });

  test('a 403 on an ordinary request is still the repository\'s answer, not a token refusal', async () => {
    const octokits = installationOctokits(probotAppAuth(probot()));
    octokits.remember(REPO, 7);
    nock(API)
      .post('/app/installations/7/access_tokens')
      .reply(201, installationToken('ghs_seven'))
      .patch(`${REPO_PATH}/git/refs/heads%2Fmain`)
      .reply(403, { message: 'Resource not accessible by integration' });
    const client = await octokits.octokitFor(REPO);
    const refused = await client.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { owner: REPO.owner, repo: REPO.name, ref: 'heads/main', sha: 'abc' }).catch((error: unknown) => error);
    expect(refused).not.toBeInstanceOf(InstallationTokenRefusedError);
    expect((refused as { status?: number }).status).toBe(403);
  });

  test('an installation id from a webhook payload saves the lookup', async () => {
    const octokits = installationOctokits(probotAppAuth(probot()));
    octokits.remember(REPO, 7);
    nock(API)
      .post('/app/installations/7/access_tokens')
      .reply(201, installationToken('ghs_seven'))
      .get(`${REPO_PATH}/pulls/2`)
      .matchHeader('authorization', 'token ghs_seven')
      .reply(200, { number: 2 });
    const client = await octokits.octokitFor(REPO);
    expect((await client.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { owner: REPO.owner, repo: REPO.name, pull_number: 2 })).data).toEqual({ number: 2 });
  });

  // A 5xx may come after the write went through: a comment or check run asked again blind would be made twice.
  test('a write sent NOT_REPEATED_BLIND (a comment) is not asked again on a 5xx: the failure goes up, to be looked for first', async () => {
    const octokits = installationOctokits(probotAppAuth(probot()));
    octokits.remember(REPO, 7);
    nock(API)
      .post('/app/installations/7/access_tokens')
      .reply(201, installationToken('ghs_seven'))
      .post(`${REPO_PATH}/issues/2/comments`)
      .reply(502, 'Bad Gateway');
    // Were it asked again, this second answer would be taken.
    const second = nock(API).post(`${REPO_PATH}/issues/2/comments`).reply(201, { id: 1 });
    const client = await octokits.octokitFor(REPO);
    const comment = client.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', { owner: REPO.owner, repo: REPO.name, issue_number: 2, body: 'hi', ...NOT_REPEATED_BLIND });
    await expect(comment).rejects.toMatchObject({ status: 502 });
    expect(second.isDone()).toBe(false);
    nock.cleanAll();
  });
});
