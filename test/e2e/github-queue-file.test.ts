/**
 * `.github/merge-queue.yml` on the fake GitHub: read through Probot's config
 * loader on push, checked on the pushed commit (a check run naming each bad
 * line), applied from the default branch; the organization's `.github`
 * fallback and `_extends`; the file wins over updateQueue.
 */
import { startGitHubHarness, type GitHubHarness } from '../support/github-harness.js';

const FILE = '.github/merge-queue.yml';
const CHECK = 'Merge queue settings';

let h: GitHubHarness;
beforeAll(async () => {
  h = await startGitHubHarness();
}, 60_000);
afterAll(() => h.close(), 30_000);
afterEach(() => {
  expect(h.fake.violations).toEqual([]);
});

const ref = (name: string, owner = 'acme') => ({ host: 'github.com', owner, name });
const getQueue = async (name: string, branch = 'main', owner = 'acme') => h.api('/v1/getQueue', { repo: ref(name, owner), targetBranch: branch });
const checkOn = async (sha: string) => {
  await h.fake.waitFor(() => h.fake.checkRuns(sha, CHECK).length > 0, { message: `the "${CHECK}" check run on ${sha.slice(0, 7)}` });
  return h.fake.checkRuns(sha, CHECK).at(-1)!;
};

test('a valid file on the default branch creates and updates queues; the file wins over updateQueue', async () => {
  const repo = h.fake.createRepo('acme/config-one');
  const first = repo.push('main', { change: 'queue file', files: { [FILE]: 'queues:\n  main:\n    concurrency: 3\n    mergeMethod: merge_commit\n    requiredStatuses: [ci]\n  release:\n    batch: true\n' } });
  expect((await checkOn(first)).conclusion).toBe('success');
  let main = (await getQueue('config-one')).json();
  expect(main).toMatchObject({ concurrency: 3, mergeMethod: 'merge_commit', requiredStatuses: ['ci'], batch: false, configuredBy: { file: FILE, commitSha: first } });
  expect((await getQueue('config-one', 'release')).json()).toMatchObject({ batch: true, concurrency: 1, mergeMethod: 'squash' });

  // Settings the file names change there; the queue's state is still an operator's.
  const refused = await h.api('/v1/updateQueue', { repo: ref('config-one'), targetBranch: 'main', concurrency: 5 });
  expect(refused.status).toBe(409);
  expect(refused.body).toMatch(/configured by \.github\/merge-queue\.yml .*`concurrency`/);
  expect((await h.api('/v1/updateQueue', { repo: ref('config-one'), targetBranch: 'main', state: 'PAUSED' })).status).toBe(200);

  // A new version: what it leaves out takes the default; a queue it stops naming is handed back to the API.
  const second = repo.push('main', { change: 'queue file 2', files: { [FILE]: 'queues:\n  main:\n    concurrency: 2\n' } });
  const check = await checkOn(second);
  expect(check.conclusion).toBe('success');
  expect(check.output.summary).toMatch(/`main`: updated[\s\S]*`release`: released/);
  main = (await getQueue('config-one')).json();
  expect(main).toMatchObject({ concurrency: 2, mergeMethod: 'squash', state: 'PAUSED', configuredBy: { commitSha: second } });
  expect(main.requiredStatuses).toBeUndefined();
  const release = (await getQueue('config-one', 'release')).json();
  expect(release).toMatchObject({ batch: true, configuredBy: 'api' });
  expect((await h.api('/v1/updateQueue', { repo: ref('config-one'), targetBranch: 'release', concurrency: 4 })).status).toBe(200);

  // The file removed: every queue is the API's again, with the settings it had.
  const removed = repo.push('main', { change: 'no queue file', files: { [FILE]: null } });
  expect((await checkOn(removed)).output.title).toBe('No queue file');
  expect((await getQueue('config-one')).json()).toMatchObject({ concurrency: 2, configuredBy: 'api' });
});

test('a force-push taking the default branch back to an earlier file applies that file again (no commit of the push touches it)', async () => {
  const repo = h.fake.createRepo('acme/config-rewind');
  const first = repo.push('main', { change: 'queue file', files: { [FILE]: 'queues:\n  main:\n    concurrency: 3\n' } });
  await checkOn(first);
  const second = repo.push('main', { change: 'queue file 2', files: { [FILE]: 'queues:\n  main:\n    concurrency: 2\n' } });
  await checkOn(second);
  expect((await getQueue('config-rewind')).json()).toMatchObject({ concurrency: 2, configuredBy: { commitSha: second } });
  // Rolled back by force-push: the push lists no commit, so nothing in it names the file (found by review: kept 2).
  repo.resetBranch('main', first);
  await h.fake.waitFor(async () => (await getQueue('config-rewind')).json().concurrency === 3, { message: 'the earlier file to apply again' });
  expect((await getQueue('config-rewind')).json()).toMatchObject({ concurrency: 3, configuredBy: { commitSha: first } });
});

test('an invalid file changes nothing and the check run names each bad line; on another branch it is only checked', async () => {
  const repo = h.fake.createRepo('acme/config-two');
  const good = repo.push('main', { change: 'queue file', files: { [FILE]: 'queues:\n  main:\n    concurrency: 2\n' } });
  await checkOn(good);
  const bad = repo.push('main', { change: 'bad queue file', files: { [FILE]: 'queues:\n  main:\n    concurrency: 0\n    mergeMethod: fast-forward\n    batchSize: 4\n' } });
  const check = await checkOn(bad);
  expect(check.conclusion).toBe('failure');
  expect(check.output.title).toBe(`3 problems in ${FILE}`);
  expect(check.output.annotations?.map((a) => [a.path, a.start_line, a.annotation_level])).toEqual([
    [FILE, 3, 'failure'],
    [FILE, 4, 'failure'],
    [FILE, 5, 'failure'],
  ]);
  expect(check.output.annotations?.[2]?.message).toMatch(/batchSize.*not a setting/);
  expect((await getQueue('config-two')).json()).toMatchObject({ concurrency: 2, configuredBy: { commitSha: good } });

  // A branch: checked on its commit (the PR shows it), applied only once it lands on main.
  repo.createBranch('tweak');
  const proposal = repo.push('tweak', { change: 'proposal', files: { [FILE]: 'queues:\n  main:\n    concurrency: 4\n' } });
  const proposed = await checkOn(proposal);
  expect(proposed).toMatchObject({ conclusion: 'success', output: { title: 'Valid queue file' } });
  expect(proposed.output.summary).toMatch(/applied when it lands on `main`/);
  expect((await getQueue('config-two')).json()).toMatchObject({ concurrency: 2 });

  // YAML that does not parse: the loader refuses it, the line comes from the file.
  const broken = repo.push('tweak', { change: 'broken', files: { [FILE]: 'queues:\n  main:\n    requiredStatuses: [ci\n' } });
  const brokenCheck = await checkOn(broken);
  expect(brokenCheck.conclusion).toBe('failure');
  expect(brokenCheck.output.summary).toMatch(/Not valid YAML/);
});

test('the organization .github fallback and _extends: a repository without a file of its own gets its queue from the organization', async () => {
  const org = h.fake.createRepo('acme/.github');
  const orgFile = org.push('main', { change: 'org queue file', files: { [FILE]: 'queues:\n  main:\n    concurrency: 2\n    requiredStatuses: [build]\n    mergeMethod: merge_commit\n' } });
  await checkOn(orgFile);

  // No file in the repository: the first PR labelled for main creates the queue from the organization's file.
  const plain = h.fake.createRepo('acme/plain');
  const n = plain.openPullRequest({ title: 'First' });
  plain.addLabel(n, 'merge-queue');
  await h.fake.waitFor(async () => (await getQueue('plain')).status === 200, { message: 'the queue created from the organization file' });
  expect((await getQueue('plain')).json()).toMatchObject({ concurrency: 2, requiredStatuses: ['build'], configuredBy: { file: `acme/.github:${FILE}`, commitSha: orgFile } });
  await h.fake.waitFor(async () => (await h.api('/v1/getSubmittedPullRequest', { repo: ref('plain'), targetBranch: 'main', pr: { number: n } })).status === 200, { message: 'the PR submitted' });

  // A repository file that extends the organization's: its own settings over the organization's, lists replaced.
  const extending = h.fake.createRepo('acme/extending');
  const own = extending.push('main', { change: 'queue file', files: { [FILE]: '_extends: .github\nqueues:\n  main:\n    concurrency: 5\n    requiredStatuses: [unit]\n' } });
  expect((await checkOn(own)).conclusion).toBe('success');
  expect((await getQueue('extending')).json()).toMatchObject({ concurrency: 5, requiredStatuses: ['unit'], mergeMethod: 'merge_commit', configuredBy: { file: FILE, commitSha: own } });

  // The organization's file changes: repositories following it read it again.
  const orgChange = org.push('main', { change: 'org queue file 2', files: { [FILE]: 'queues:\n  main:\n    concurrency: 3\n    mergeMethod: rebase\n' } });
  await checkOn(orgChange);
  await h.fake.waitFor(async () => (await getQueue('plain')).json().concurrency === 3, { message: 'the organization change applied to acme/plain' });
  expect((await getQueue('plain')).json()).toMatchObject({ mergeMethod: 'rebase', configuredBy: { commitSha: orgChange } });
  expect((await getQueue('extending')).json()).toMatchObject({ concurrency: 5, mergeMethod: 'rebase', requiredStatuses: ['unit'] });

  // The organization's file deleted: a repository that only inherited it is configured through the API again.
  const orgGone = org.push('main', { change: 'org queue file gone', files: { [FILE]: null } });
  await checkOn(orgGone);
  await h.fake.waitFor(async () => (await getQueue('plain')).json().configuredBy === 'api', { message: 'acme/plain handed back to the API' });
  expect((await getQueue('plain')).json()).toMatchObject({ concurrency: 3, mergeMethod: 'rebase' });
  expect((await h.api('/v1/updateQueue', { repo: ref('plain'), targetBranch: 'main', concurrency: 1 })).status).toBe(200);
});

test("a force-push to a repository whose queues are configured through the API leaves them so, though the organization has a file (found by review)", async () => {
  // The fallback test above made acme/.github (and deleted its file); alone, this one makes it.
  const org = h.fake.state.findRepo('acme', '.github') ? h.fake.repo('acme/.github') : h.fake.createRepo('acme/.github');
  await checkOn(org.push('main', { change: 'org queue file again', files: { [FILE]: 'queues:\n  main:\n    concurrency: 4\n' } }));
  const repo = h.fake.createRepo('acme/api-configured');
  const first = repo.push('main', { change: 'a change' });
  repo.push('main', { change: 'another' });
  expect((await h.api('/v1/createQueue', { repo: ref('api-configured'), targetBranch: 'main', concurrency: 2 })).status).toBe(200);
  repo.resetBranch('main', first);
  // The push answered, then handled in the background (the rewind test above applies within this time).
  await h.fake.webhooks.idle();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect((await getQueue('api-configured')).json()).toMatchObject({ concurrency: 2, configuredBy: 'api' });
});
