import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Octokit } from '@octokit/rest';
import { Webhooks } from '@octokit/webhooks';
import { Probot } from 'probot';
import { conform } from '../support/fake-github/conform.js';
import { deliver, startFakeGitHub, type FakeGitHub } from '../support/fake-github/index.js';
import { apiDescription } from '../support/fake-github/openapi.js';
import { responseSchema, validateResponse } from '../support/fake-github/validation.js';

/**
 * The fake itself: it must refuse what GitHub's description refuses, keep content
 * honest across merge methods, and answer in GitHub's shapes (each test ends with no
 * violations, which includes the fake's own responses validating).
 */

let fake: FakeGitHub;

beforeEach(async () => {
  // Merges back to back below: GitHub's "Base branch was modified" window is tested on a fake of its own.
  fake = await startFakeGitHub({ baseModifiedWindowMs: 0 });
});

afterEach(async () => {
  await fake.close();
});

/** Octokit logs every 4xx with console.error; several here are expected. */
const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function client(owner = 'acme'): Octokit {
  return new Octokit({ baseUrl: fake.baseUrl, auth: fake.installationToken(owner), log });
}

async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

describe('validation against GitHub’s OpenAPI description', () => {
  it('records a body field of the wrong type, an unknown field and an unknown route as violations', async () => {
    const repo = fake.createRepo('acme/widgets');
    const octokit = client();
    const main = repo.branch('main')!;

    expect(await statusOf(octokit.request('POST /repos/{owner}/{repo}/git/refs', { owner: 'acme', repo: 'widgets', ref: 'refs/heads/x', sha: 42 as unknown as string }))).toBe(422);
    expect(await statusOf(octokit.request('POST /repos/{owner}/{repo}/git/refs', { owner: 'acme', repo: 'widgets', ref: 'refs/heads/x', sha: main, force: true } as never))).toBe(422);
    expect(await statusOf(octokit.request('GET /repos/{owner}/{repo}/no-such-thing', { owner: 'acme', repo: 'widgets' }))).toBe(404);
    expect(await statusOf(octokit.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { owner: 'acme', repo: 'widgets', pull_number: 'abc' as unknown as number }))).toBe(404);

    expect(fake.violations.map((v) => [v.kind, v.operationId])).toEqual([
      ['request', 'git/create-ref'],
      ['request', 'git/create-ref'],
      ['route', undefined],
      ['request', 'pulls/get'],
    ]);
    expect(fake.violations[0]!.message).toMatch(/body\/sha must be string/);
    expect(fake.violations[1]!.message).toMatch(/unknown body field "force"/);
    expect(repo.branch('x')).toBeUndefined();
  });

  it('records a route GitHub has but the fake does not serve as unimplemented (501), not as the client’s fault', async () => {
    fake.createRepo('acme/widgets');
    expect(await statusOf(client().repos.listReleases({ owner: 'acme', repo: 'widgets' }))).toBe(501);
    expect(fake.violations).toEqual([expect.objectContaining({ kind: 'unimplemented', operationId: 'repos/list-releases' })]);
  });

  it('checks the fake’s own answers: a response missing a required field or with a wrong type does not validate', () => {
    const operation = apiDescription().operation('pulls/get')!;
    const schema = responseSchema(operation, 200)!;
    expect(validateResponse(operation, 200, { number: 1 })).toEqual(expect.arrayContaining([expect.stringMatching(/must have required property/)]));
    const completed = conform(schema, { number: 1, title: 'T', state: 'open', mergeable: null, head: { sha: 'abc' } }, 'http://127.0.0.1:1') as Record<string, unknown>;
    expect(validateResponse(operation, 200, completed)).toEqual([]);
    expect(completed).toMatchObject({ number: 1, title: 'T', mergeable: null, head: { sha: 'abc' }, merged_by: null });
    expect(validateResponse(operation, 200, { ...completed, number: '1' })).toEqual([expect.stringMatching(/number must be integer/)]);
    // A status the description does not list for the operation.
    expect(validateResponse(operation, 201, completed)).toBeNull();
  });

  it('records wrong credentials: no token, an unknown installation token, the app JWT on a repository route', async () => {
    fake.createRepo('acme/widgets');
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOjF9.c2ln';
    expect(await statusOf(new Octokit({ baseUrl: fake.baseUrl, log }).repos.get({ owner: 'acme', repo: 'widgets' }))).toBe(401);
    expect(await statusOf(new Octokit({ baseUrl: fake.baseUrl, auth: 'ghs_forged', log }).repos.get({ owner: 'acme', repo: 'widgets' }))).toBe(401);
    expect(await statusOf(new Octokit({ baseUrl: fake.baseUrl, auth: jwt, log }).repos.get({ owner: 'acme', repo: 'widgets' }))).toBe(401);
    expect(fake.violations.map((v) => v.kind)).toEqual(['auth', 'auth', 'auth']);
  });

  it('serves Probot’s installation auth: JWT → access token → repository calls as the app’s bot', async () => {
    const repo = fake.createRepo('acme/widgets');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    const probot = new Probot({ appId: fake.app.id, privateKey, secret: 's', baseUrl: fake.baseUrl });
    const octokit = await probot.auth(repo.installationId);
    const number = repo.openPullRequest({ title: 'Add a widget' });
    await octokit.rest.issues.createComment({ owner: 'acme', repo: 'widgets', issue_number: number, body: 'queued' });

    expect(fake.requestsTo('apps/create-installation-access-token')).toHaveLength(1);
    expect(repo.comments(number)).toEqual([expect.objectContaining({ body: 'queued', user: 'merge-queue[bot]' })]);
    fake.assertNoViolations();
  });
});

describe('git content through the API', () => {
  it('creates a test branch, merges two PR heads into it, answers 204 for nothing to merge and 409 for a declared conflict', async () => {
    const repo = fake.createRepo('acme/widgets');
    const a = repo.openPullRequest({ title: 'A' });
    const b = repo.openPullRequest({ title: 'B' });
    const c = repo.openPullRequest({ title: 'C' });
    repo.declareConflict(b, c);
    const octokit = client();
    const base = repo.branch('main')!;

    const created = await octokit.git.createRef({ owner: 'acme', repo: 'widgets', ref: 'refs/heads/mq/main/1', sha: base });
    expect(created.status).toBe(201);
    expect(created.data.object.sha).toBe(base);

    const first = await octokit.repos.merge({ owner: 'acme', repo: 'widgets', base: 'mq/main/1', head: repo.pullRequest(a).headSha, commit_message: 'Test #1' });
    expect(first.status).toBe(201);
    const second = await octokit.repos.merge({ owner: 'acme', repo: 'widgets', base: 'mq/main/1', head: repo.pullRequest(b).headSha });
    expect(second.data.parents.map((p) => p.sha)).toEqual([first.data.sha, repo.pullRequest(b).headSha]);
    expect(fake.treeOf(second.data.sha)).toEqual(['#1.1', '#2.1']);
    expect(fake.messageOf(first.data.sha)).toBe('Test #1');

    const again = await octokit.repos.merge({ owner: 'acme', repo: 'widgets', base: 'mq/main/1', head: repo.pullRequest(a).headSha });
    expect(again.status).toBe(204);
    expect(await statusOf(octokit.repos.merge({ owner: 'acme', repo: 'widgets', base: 'mq/main/1', head: repo.pullRequest(c).headSha }))).toBe(409);
    expect(repo.branch('mq/main/1')).toBe(second.data.sha);

    // Refs read back with slashes in them, either encoding.
    const ref = await octokit.git.getRef({ owner: 'acme', repo: 'widgets', ref: 'heads/mq/main/1' });
    expect(ref.data.object.sha).toBe(second.data.sha);
    const raw = await octokit.request(`GET /repos/acme/widgets/branches/mq/main/1`);
    expect((raw.data as { commit: { sha: string } }).commit.sha).toBe(second.data.sha);
    expect(await statusOf(octokit.git.updateRef({ owner: 'acme', repo: 'widgets', ref: 'heads/mq/main/1', sha: base }))).toBe(422);
    await octokit.git.deleteRef({ owner: 'acme', repo: 'widgets', ref: 'heads/mq/main/1' });
    expect(repo.branch('mq/main/1')).toBeUndefined();
    fake.assertNoViolations();
  });

  it('gives the same tree for a squash merge, a rebase merge and the merges API, and new shas', async () => {
    const repo = fake.createRepo('acme/widgets');
    const a = repo.openPullRequest({ title: 'A', commits: 2 });
    const b = repo.openPullRequest({ title: 'B' });
    const octokit = client();
    const base = repo.branch('main')!;

    await octokit.git.createRef({ owner: 'acme', repo: 'widgets', ref: 'refs/heads/mq/main/1', sha: base });
    await octokit.repos.merge({ owner: 'acme', repo: 'widgets', base: 'mq/main/1', head: repo.pullRequest(a).headSha });
    const tested = (await octokit.repos.merge({ owner: 'acme', repo: 'widgets', base: 'mq/main/1', head: repo.pullRequest(b).headSha })).data.sha;

    const pr = await octokit.pulls.get({ owner: 'acme', repo: 'widgets', pull_number: a });
    expect(pr.data).toMatchObject({ mergeable: true, mergeable_state: 'clean', head: { sha: repo.pullRequest(a).headSha, ref: `feature-${a}` }, base: { ref: 'main' } });

    expect(await statusOf(octokit.pulls.merge({ owner: 'acme', repo: 'widgets', pull_number: a, sha: base, merge_method: 'squash' }))).toBe(409);
    const squashed = await octokit.pulls.merge({ owner: 'acme', repo: 'widgets', pull_number: a, sha: repo.pullRequest(a).headSha, merge_method: 'squash', commit_title: 'Custom title (#1)' });
    const rebased = await octokit.pulls.merge({ owner: 'acme', repo: 'widgets', pull_number: b, merge_method: 'rebase' });

    const main = repo.branch('main')!;
    expect(main).toBe(rebased.data.sha);
    expect(fake.sameContent(main, tested)).toBe(true);
    expect(main).not.toBe(tested);
    expect(fake.parentsOf(squashed.data.sha)).toEqual([base]);
    expect(fake.messageOf(squashed.data.sha).split('\n')[0]).toBe('Custom title (#1)');
    expect(repo.pullRequest(a)).toMatchObject({ merged: true, state: 'closed', mergeCommitSha: squashed.data.sha, mergedBy: 'merge-queue[bot]' });
    expect(await statusOf(octokit.pulls.merge({ owner: 'acme', repo: 'widgets', pull_number: a }))).toBe(405);
    fake.assertNoViolations();
  });

  it('reports a PR that conflicts with its base as not mergeable, and can say “still computing”', async () => {
    const repo = fake.createRepo('acme/widgets');
    const a = repo.openPullRequest();
    const b = repo.openPullRequest();
    repo.declareConflict(a, b);
    repo.mergePullRequest(a, { method: 'squash' });
    repo.mergeableUnknownFor(b, 1);
    const octokit = client();

    expect((await octokit.pulls.get({ owner: 'acme', repo: 'widgets', pull_number: b })).data.mergeable).toBeNull();
    expect((await octokit.pulls.get({ owner: 'acme', repo: 'widgets', pull_number: b })).data).toMatchObject({ mergeable: false, mergeable_state: 'dirty' });
    expect(await statusOf(octokit.pulls.merge({ owner: 'acme', repo: 'widgets', pull_number: b }))).toBe(405);
    fake.assertNoViolations();
  });
});

describe('checks, statuses, protection', () => {
  it('round-trips the app’s check run and CI’s check runs and statuses', async () => {
    const repo = fake.createRepo('acme/widgets');
    const n = repo.openPullRequest();
    const head = repo.pullRequest(n).headSha;
    const octokit = client();

    const created = await octokit.checks.create({ owner: 'acme', repo: 'widgets', name: 'Merge Queue (main)', head_sha: head, status: 'in_progress', output: { title: 'Queued', summary: 'Position 1' } });
    await octokit.checks.update({ owner: 'acme', repo: 'widgets', check_run_id: created.data.id, conclusion: 'success', output: { title: 'Merged', summary: 'Merged by the queue' } });
    fake.ci.complete(head, 'ci', 'failure');
    fake.ci.complete(head, 'ci', 'success');
    fake.ci.status(head, 'legacy-ci', 'pending');
    fake.ci.status(head, 'legacy-ci', 'success');

    const mine = await octokit.checks.listForRef({ owner: 'acme', repo: 'widgets', ref: head, check_name: 'Merge Queue (main)' });
    expect(mine.data.check_runs).toEqual([expect.objectContaining({ status: 'completed', conclusion: 'success', output: expect.objectContaining({ title: 'Merged' }), app: expect.objectContaining({ slug: 'merge-queue' }) })]);
    expect(mine.data.check_runs[0]!.pull_requests.map((p) => p.number)).toEqual([n]);
    const latest = await octokit.checks.listForRef({ owner: 'acme', repo: 'widgets', ref: head, check_name: 'ci' });
    expect(latest.data.check_runs.map((r) => r.conclusion)).toEqual(['success']);
    const all = await octokit.checks.listForRef({ owner: 'acme', repo: 'widgets', ref: head, check_name: 'ci', filter: 'all' });
    expect(all.data.check_runs.map((r) => r.conclusion)).toEqual(['success', 'failure']);
    const combined = await octokit.repos.getCombinedStatusForRef({ owner: 'acme', repo: 'widgets', ref: `feature-${n}` });
    expect(combined.data).toMatchObject({ state: 'success', total_count: 1, statuses: [expect.objectContaining({ context: 'legacy-ci', state: 'success' })] });

    expect(fake.checkRuns(head, 'Merge Queue (main)')).toEqual([expect.objectContaining({ app: 'merge-queue', conclusion: 'success' })]);
    // Only apps create check runs on GitHub.
    const asUser = new Octokit({ baseUrl: fake.baseUrl, auth: 'ghp_personal', log });
    expect(await statusOf(asUser.checks.create({ owner: 'acme', repo: 'widgets', name: 'x', head_sha: head }))).toBe(403);
    fake.assertNoViolations();
  });

  it('answers 404 without required status checks, the checks with them, and rulesets’ rules', async () => {
    const repo = fake.createRepo('acme/widgets');
    const octokit = client();
    const get = () => octokit.repos.getStatusChecksProtection({ owner: 'acme', repo: 'widgets', branch: 'main' });

    expect(await statusOf(get())).toBe(404);
    expect((await octokit.repos.getBranchRules({ owner: 'acme', repo: 'widgets', branch: 'main' })).data).toEqual([]);

    repo.protectBranch('main', { requiredChecks: ['ci', { context: 'lint', appId: 15368 }] });
    repo.addRuleset({ requiredChecks: ['e2e'] });
    expect((await get()).data).toMatchObject({ strict: false, contexts: ['ci', 'lint'], checks: [{ context: 'ci', app_id: null }, { context: 'lint', app_id: 15368 }] });
    const rules = await octokit.repos.getBranchRules({ owner: 'acme', repo: 'widgets', branch: 'main' });
    expect(rules.data).toEqual([expect.objectContaining({ type: 'required_status_checks', parameters: expect.objectContaining({ required_status_checks: [{ context: 'e2e' }] }), ruleset_source: 'acme/widgets' })]);
    const branch = await octokit.repos.getBranch({ owner: 'acme', repo: 'widgets', branch: 'main' });
    expect(branch.data).toMatchObject({ protected: true, protection: { required_status_checks: { contexts: ['ci', 'lint'] } } });

    // The protection is enforced: a PR merge without the required checks is refused.
    const n = repo.openPullRequest();
    expect(await statusOf(octokit.pulls.merge({ owner: 'acme', repo: 'widgets', pull_number: n }))).toBe(405);
    const head = repo.pullRequest(n).headSha;
    fake.ci.complete(head, 'ci');
    fake.ci.complete(head, 'lint', 'skipped');
    fake.ci.status(head, 'e2e', 'success');
    expect((await octokit.pulls.merge({ owner: 'acme', repo: 'widgets', pull_number: n })).data.merged).toBe(true);
    fake.assertNoViolations();
  });
});

describe('limits and refusals GitHub has', () => {
  it('lists at most 250 commits of a pull request (its first), in pages of at most 100', async () => {
    const repo = fake.createRepo('acme/widgets');
    const n = repo.openPullRequest({ commits: 260 });
    const octokit = client();

    const pages = await Promise.all([1, 2, 3, 4].map((page) => octokit.pulls.listCommits({ owner: 'acme', repo: 'widgets', pull_number: n, per_page: 250, page })));
    expect(pages.map((p) => p.data.length)).toEqual([100, 100, 50, 0]);
    const all = await octokit.paginate(octokit.pulls.listCommits, { owner: 'acme', repo: 'widgets', pull_number: n, per_page: 100 });
    expect(all).toHaveLength(250);
    expect(all.at(-1)!.sha).not.toBe(repo.pullRequest(n).headSha);
    fake.assertNoViolations();
  });

  it('answers 403 "Upgrade to GitHub Pro" for protection and rules of a private repository on GitHub Free; a public one reads them', async () => {
    fake.createRepo('acme/widgets', { private: true, freePlan: true });
    fake.createRepo('acme/open', { private: false, freePlan: true });
    const octokit = client();
    const failure = await octokit.repos.getBranchProtection({ owner: 'acme', repo: 'widgets', branch: 'main' }).catch((e: unknown) => e);

    expect(failure).toMatchObject({ status: 403, response: { data: { message: 'Upgrade to GitHub Pro or make this repository public to enable this feature.' } } });
    expect(await statusOf(octokit.repos.getBranchRules({ owner: 'acme', repo: 'widgets', branch: 'main' }))).toBe(403);
    expect(await statusOf(octokit.repos.getBranchProtection({ owner: 'acme', repo: 'open', branch: 'main' }))).toBe(404);
    expect((await octokit.repos.getBranchRules({ owner: 'acme', repo: 'open', branch: 'main' })).data).toEqual([]);
    fake.assertNoViolations();
  });

  it('enforces rulesets that restrict branch creation and force pushes (422, GitHub\'s words), except for their bypass actors', async () => {
    const repo = fake.createRepo('acme/widgets');
    repo.addRuleset({ include: ['refs/heads/mq/**'], rules: [{ type: 'creation' }] });
    repo.addRuleset({ include: ['refs/heads/mq-staging/**'], rules: [{ type: 'non_fast_forward' }] });
    const octokit = client();
    const r = { owner: 'acme', repo: 'widgets' };
    const base = repo.branch('main')!;

    const refused = await octokit.git.createRef({ ...r, ref: 'refs/heads/mq/main/1', sha: base }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 422, response: { data: { message: expect.stringMatching(/^Repository rule violations found\n\nCannot create ref due to creations being restricted\./) } } });
    await octokit.git.createRef({ ...r, ref: 'refs/heads/mq-staging/main', sha: base });
    const ahead = repo.push('mq-staging/main', { change: 'x' });
    // Forward is fine; back is a force push.
    expect(await statusOf(octokit.git.updateRef({ ...r, ref: 'heads/mq-staging/main', sha: base, force: true }))).toBe(422);
    expect(repo.branch('mq-staging/main')).toBe(ahead);

    repo.addRuleset({ include: ['refs/heads/other/**'], rules: [{ type: 'creation' }], bypassLogins: ['merge-queue[bot]'] });
    expect((await octokit.git.createRef({ ...r, ref: 'refs/heads/other/1', sha: base })).status).toBe(201);
    fake.assertNoViolations();
  });

  it('answers 422 "Reference already exists" to creating a ref that exists, as GitHub does, and leaves it where it was', async () => {
    const repo = fake.createRepo('acme/widgets');
    const octokit = client();
    const r = { owner: 'acme', repo: 'widgets' };
    const base = repo.branch('main')!;
    await octokit.git.createRef({ ...r, ref: 'refs/heads/mq-landing/main/1', sha: base });
    const ahead = repo.push('main', { change: 'x' });

    const refused = await octokit.git.createRef({ ...r, ref: 'refs/heads/mq-landing/main/1', sha: ahead }).catch((e: unknown) => e);

    expect(refused).toMatchObject({ status: 422, response: { data: { message: 'Reference already exists' } } });
    expect(repo.branch('mq-landing/main/1')).toBe(base);
    fake.assertNoViolations();
  });
});

describe('CI helpers', () => {
  it('runs CI by itself on test branches, and says which PRs a commit contains', async () => {
    const repo = fake.createRepo('acme/widgets');
    const prs = [repo.openPullRequest(), repo.openPullRequest(), repo.openPullRequest()];
    fake.ci.autoRun({ branches: /^mq\//, checks: ['ci'], conclusion: ({ pullRequests }) => (pullRequests.includes(prs[1]!) ? 'failure' : 'success') });
    const o = client();
    const r = { owner: 'acme', repo: 'widgets' };
    await o.git.createRef({ ...r, ref: 'refs/heads/mq/main/1', sha: repo.branch('main')! });
    for (const n of prs) await o.repos.merge({ ...r, base: 'mq/main/1', head: repo.pullRequest(n).headSha });
    const batch = repo.branch('mq/main/1')!;
    expect(fake.pullRequestsIn(batch)).toEqual(prs);

    await fake.waitFor(() => fake.checkRuns(batch, 'ci').some((c) => c.status === 'completed'));
    expect(fake.checkRuns(batch, 'ci')).toEqual([expect.objectContaining({ conclusion: 'failure', app: 'github-actions' })]);
    // Every intermediate head was a push too: the first one (PR 1 alone) passed.
    const first = fake.parentsOf(fake.parentsOf(batch)[0]!)[0]!;
    expect(fake.pullRequestsIn(first)).toEqual([prs[0]]);
    await fake.waitFor(() => fake.checkRuns(first, 'ci').some((c) => c.conclusion === 'success'));
    fake.assertNoViolations();
  });
});

describe('fault injection', () => {
  it('fails the next matching request(s) as asked, then serves again', async () => {
    const repo = fake.createRepo('acme/widgets');
    const n = repo.openPullRequest();
    fake.failNext({ operationId: 'pulls/get', status: 502, times: 2 });
    const o = client();
    expect(await statusOf(o.pulls.get({ owner: 'acme', repo: 'widgets', pull_number: n }))).toBe(502);
    expect(await statusOf(o.pulls.get({ owner: 'acme', repo: 'widgets', pull_number: n }))).toBe(502);
    expect((await o.pulls.get({ owner: 'acme', repo: 'widgets', pull_number: n })).data.number).toBe(n);
    expect(fake.requestsTo('pulls/get').map((r) => r.status)).toEqual([502, 502, 200]);
    fake.assertNoViolations();
  });
});

describe('every served route', () => {
  it('answers in GitHub’s shape (the fake’s responses validate against the description)', async () => {
    const repo = fake.createRepo('acme/widgets');
    repo.setPermission('alice', 'write');
    repo.setPermission('bob', 'maintain');
    repo.protectBranch('main', { requiredChecks: ['ci'], requiredApprovals: 1 });
    const n = repo.openPullRequest({ title: 'A', body: 'Body', user: 'alice', labels: ['bug'] });
    const head = repo.pullRequest(n).headSha;
    repo.approve(n, 'bob');
    const o = client();
    const r = { owner: 'acme', repo: 'widgets' };
    const jwtClient = new Octokit({ baseUrl: fake.baseUrl, auth: 'eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOjF9.c2ln', log });

    await o.repos.get(r);
    await o.repos.listBranches(r);
    await o.repos.getCommit({ ...r, ref: 'main' });
    await o.repos.getBranchProtection({ ...r, branch: 'main' });
    await o.repos.getCollaboratorPermissionLevel({ ...r, username: 'alice' });
    await o.repos.listPullRequestsAssociatedWithCommit({ ...r, commit_sha: head });
    await o.repos.compareCommitsWithBasehead({ ...r, basehead: `main...feature-${n}` });
    await o.pulls.list({ ...r, state: 'all', head: `acme:feature-${n}` });
    await o.pulls.listCommits({ ...r, pull_number: n });
    await o.pulls.listReviews({ ...r, pull_number: n });
    await o.pulls.update({ ...r, pull_number: n, title: 'A2' });
    await o.pulls.checkIfMerged({ ...r, pull_number: n }).catch(() => undefined);
    await o.issues.get({ ...r, issue_number: n });
    await o.issues.addLabels({ ...r, issue_number: n, labels: ['merge-queue'] });
    await o.issues.setLabels({ ...r, issue_number: n, labels: ['merge-queue', 'x'] });
    await o.issues.removeLabel({ ...r, issue_number: n, name: 'x' });
    await o.issues.listLabelsOnIssue({ ...r, issue_number: n });
    const comment = await o.issues.createComment({ ...r, issue_number: n, body: 'hi' });
    await o.issues.updateComment({ ...r, comment_id: comment.data.id, body: 'hello' });
    await o.issues.listComments({ ...r, issue_number: n });
    await o.issues.deleteComment({ ...r, comment_id: comment.data.id });
    const commit = await o.git.getCommit({ ...r, commit_sha: head });
    const made = await o.git.createCommit({ ...r, message: 'same tree', tree: commit.data.tree.sha, parents: [head] });
    expect(fake.treeOf(made.data.sha)).toEqual(fake.treeOf(head));
    await o.git.createRef({ ...r, ref: 'refs/heads/mq/main/7', sha: made.data.sha });
    await o.git.listMatchingRefs({ ...r, ref: 'heads/mq/' });
    const draft = await o.pulls.create({ ...r, head: 'mq/main/7', base: 'main', title: 'Test run 7', draft: true });
    expect(draft.data).toMatchObject({ draft: true, user: { login: 'merge-queue[bot]' } });
    await o.pulls.update({ ...r, pull_number: draft.data.number, state: 'closed' });
    const run = await o.checks.create({ ...r, name: 'Merge Queue (main)', head_sha: head });
    await o.checks.get({ ...r, check_run_id: run.data.id });
    await o.checks.listForSuite({ ...r, check_suite_id: run.data.check_suite!.id });
    await o.repos.createCommitStatus({ ...r, sha: head, state: 'success', context: 'ci' });
    await o.repos.listCommitStatusesForRef({ ...r, ref: head });
    await o.apps.listReposAccessibleToInstallation();
    await jwtClient.apps.getAuthenticated();
    await jwtClient.apps.listInstallations();
    await jwtClient.apps.getInstallation({ installation_id: repo.installationId });
    await jwtClient.apps.getRepoInstallation(r);
    await jwtClient.apps.getOrgInstallation({ org: 'acme' });

    const merged = await o.pulls.merge({ ...r, pull_number: n, merge_method: 'merge' });
    expect(fake.parentsOf(merged.data.sha)).toEqual([expect.any(String), head]);
    expect(fake.messageOf(merged.data.sha)).toBe(`Merge pull request #${n} from acme/feature-${n}\n\nA2`);
    fake.assertNoViolations();
  });
});

describe('webhooks', () => {
  let receiver: Server;
  let url: string;
  const received: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];

  beforeEach(async () => {
    received.length = 0;
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(202).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
  });

  afterEach(async () => {
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('signs deliveries so @octokit/webhooks verifies them, and redelivers with the same id and bytes', async () => {
    const repo = fake.createRepo('acme/widgets');
    const n = repo.openPullRequest({ title: 'Add a widget', body: 'merge-commit-title: Widgets!' });
    const delivery = await fake.webhooks.send('pull_request', 'labeled', { number: n, label: { name: 'merge-queue' } }, { repo: 'acme/widgets', target: { url, secret: 'shh' }, deliveryId: 'delivery-1' });

    expect(delivery.status).toBe(202);
    const got = received[0]!;
    expect(got.headers).toMatchObject({ 'x-github-event': 'pull_request', 'x-github-delivery': 'delivery-1', 'content-type': 'application/json' });
    const webhooks = new Webhooks({ secret: 'shh' });
    expect(await webhooks.verify(got.body, String(got.headers['x-hub-signature-256']))).toBe(true);
    expect(await new Webhooks({ secret: 'other' }).verify(got.body, String(got.headers['x-hub-signature-256']))).toBe(false);
    const payload = JSON.parse(got.body) as { action: string; number: number; label: { name: string }; repository: { full_name: string }; installation: { id: number }; pull_request: unknown };
    expect(payload).toMatchObject({ action: 'labeled', number: n, label: { name: 'merge-queue' }, repository: { full_name: 'acme/widgets' }, installation: { id: repo.installationId } });

    await fake.webhooks.redeliver('delivery-1', { url, secret: 'shh' });
    expect(received[1]!.headers['x-github-delivery']).toBe('delivery-1');
    expect(received[1]!.body).toBe(got.body);

    // The generic sender works without a fake too.
    const bare = await deliver({ url, secret: 'shh' }, 'ping', { zen: 'Keep it logically awesome.' });
    expect(await webhooks.verify(received[2]!.body, bare.headers['x-hub-signature-256']!)).toBe(true);
  });

  it('holds events while paused, then delivers them in order; dropped ones never arrive', async () => {
    const repo = fake.createRepo('acme/widgets');
    fake.webhooks.deliverTo({ url, secret: 'shh', events: ['pull_request'], auto: false });
    const n = repo.openPullRequest();
    expect(fake.webhooks.pending.map((e) => e.action)).toEqual(['opened']);
    fake.webhooks.drop();
    repo.addLabel(n, 'merge-queue');
    repo.convertToDraft(n);
    await fake.webhooks.flush();
    expect(received.map((r) => (JSON.parse(r.body) as { action: string }).action)).toEqual(['labeled', 'converted_to_draft']);
    expect(fake.webhooks.deliveries.map((d) => d.status)).toEqual([202, 202]);
  });

  it('delivers events from state changes automatically, in order, with the fake’s facts', async () => {
    const repo = fake.createRepo('acme/widgets');
    fake.webhooks.deliverTo({ url, secret: 'shh', events: ['pull_request', 'check_run', 'issue_comment', 'push'] });
    const n = repo.openPullRequest({ title: 'Add a widget' });
    repo.addLabel(n, 'merge-queue');
    const head = repo.pullRequest(n).headSha;
    fake.ci.complete(head, 'ci', 'success');
    repo.comment(n, '/mq merge --priority=high', 'alice');
    repo.mergePullRequest(n, { method: 'squash', sender: 'alice' });
    await fake.webhooks.idle();

    const events = received.map((r) => {
      const p = JSON.parse(r.body) as { action?: string; ref?: string };
      return `${String(r.headers['x-github-event'])}${p.action ? `.${p.action}` : ''}${p.ref ? ` ${p.ref}` : ''}`;
    });
    expect(events).toEqual([
      'push refs/heads/feature-1',
      'pull_request.opened',
      'pull_request.labeled',
      'check_run.created',
      'check_run.completed',
      'issue_comment.created',
      'pull_request.closed',
      'push refs/heads/main',
    ]);
    const closed = JSON.parse(received[6]!.body) as { pull_request: { merged: boolean; merge_commit_sha: string; number: number } };
    expect(closed.pull_request).toMatchObject({ merged: true, number: n, merge_commit_sha: repo.branch('main') });
    const completed = JSON.parse(received[4]!.body) as { check_run: { head_sha: string; name: string; conclusion: string; pull_requests: Array<{ number: number }> } };
    expect(completed.check_run).toMatchObject({ head_sha: head, name: 'ci', conclusion: 'success', pull_requests: [{ number: n }] });
    const comment = JSON.parse(received[5]!.body) as { comment: { body: string; user: { login: string } }; issue: { number: number; pull_request: unknown } };
    expect(comment).toMatchObject({ comment: { body: '/mq merge --priority=high', user: { login: 'alice' } }, issue: { number: n } });
    expect(comment.issue.pull_request).toBeDefined();
    fake.assertNoViolations();
  });
});

test('a merge right after its base moved is refused as GitHub does ("Base branch was modified"); a moment later it goes through', async () => {
  const own = await startFakeGitHub({ baseModifiedWindowMs: 300 });
  try {
    const repo = own.createRepo('acme/window');
    const octokit = new Octokit({ baseUrl: own.baseUrl, auth: 'ghp_personal' });
    const a = repo.openPullRequest({ title: 'A' });
    const b = repo.openPullRequest({ title: 'B' });
    await new Promise((r) => setTimeout(r, 350));
    await octokit.pulls.merge({ owner: 'acme', repo: 'window', pull_number: a });
    await expect(octokit.pulls.merge({ owner: 'acme', repo: 'window', pull_number: b })).rejects.toMatchObject({ status: 405, message: expect.stringContaining('Base branch was modified') });
    await new Promise((r) => setTimeout(r, 350));
    expect((await octokit.pulls.merge({ owner: 'acme', repo: 'window', pull_number: b })).data.merged).toBe(true);
  } finally {
    await own.close();
  }
});
