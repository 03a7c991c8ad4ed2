import type { LightMyRequestResponse } from 'fastify';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { startApiHarness, repo, type ApiHarness } from '../support/api-harness.js';

/** createQueue, getQueue, updateQueue and deleteQueue against API-SUPPLEMENT.md. */

let h: ApiHarness;
let token: string;

beforeAll(async () => {
  h = await startApiHarness({ prefix: 'queue_endpoints' });
  token = await h.tokenFor('acme');
});

afterAll(async () => {
  await h.close();
});

let branchCounter = 0;
/** A branch of its own per call: tests never see each other's queues. */
const freshBranch = (label: string) => `q-${label}-${++branchCounter}`;

const CONFIG_KEYS = [
  'mode',
  'concurrency',
  'batch',
  'batchingMinSize',
  'batchingMaxWaitTimeMinutes',
  'bisectionConcurrency',
  'pendingFailureDepth',
  'canOptimisticallyMerge',
  'testingTimeoutMinutes',
  'mergeMethod',
  'commentsEnabled',
  'commandsEnabled',
  'statusCheckEnabled',
  'enqueueingLabel',
  'createPrsForTestingBranches',
  'directMergeMode',
] as const;

function json(res: LightMyRequestResponse): Record<string, unknown> {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.json<Record<string, unknown>>();
}

/** The supplement: errors are `text/plain; charset=utf-8`, one non-empty sentence, no stack trace. */
function expectPlainError(res: LightMyRequestResponse, status: number, mentions?: RegExp): string {
  expect({ status: res.statusCode, body: res.body }).toEqual({ status, body: expect.any(String) });
  expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  const body = res.body;
  expect(body.trim().length).toBeGreaterThan(3);
  expect(body).toMatch(/[.!?]$/);
  expect(body).not.toMatch(/\n\s+at /);
  expect(body.startsWith('{')).toBe(false);
  if (mentions) expect(body).toMatch(mentions);
  return body;
}

async function createQueue(targetBranch: string, extra: Record<string, unknown> = {}, r = repo()): Promise<Record<string, unknown>> {
  const res = await h.post('/v1/createQueue', { repo: r, targetBranch, ...extra }, token);
  expect(res.statusCode).toBe(200);
  return json(res);
}

async function getQueue(targetBranch: string, r = repo()): Promise<LightMyRequestResponse> {
  return h.post('/v1/getQueue', { repo: r, targetBranch }, token);
}

async function updateQueue(targetBranch: string, change: Record<string, unknown>, r = repo()): Promise<LightMyRequestResponse> {
  return h.post('/v1/updateQueue', { repo: r, targetBranch, ...change }, token);
}

/** The configuration part of a queue object. */
function configOf(view: Record<string, unknown>): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) config[key] = view[key];
  if ('requiredStatuses' in view) config.requiredStatuses = view.requiredStatuses;
  return config;
}

describe('POST /v1/createQueue', () => {
  test('answers the queue object with every configuration field at its default', async () => {
    const targetBranch = freshBranch('defaults');
    const view = await createQueue(targetBranch);
    expect(view).toMatchObject({
      repo: repo(),
      targetBranch,
      branch: targetBranch,
      state: 'RUNNING',
      enqueuedPullRequests: [],
    });
    expect(typeof view.id).toBe('string');
    expect((view.id as string).length).toBeGreaterThan(0);
    expect(new Date(view.createdAt as string).toISOString()).toBe(view.createdAt);
    expect(new Date(view.updatedAt as string).toISOString()).toBe(view.updatedAt);
    // Every default of src/domain/queue-config.ts, and requiredStatuses absent (branch protection decides).
    const expected: Record<string, unknown> = {};
    for (const key of CONFIG_KEYS) expected[key] = DEFAULT_QUEUE_CONFIG[key];
    expect(configOf(view)).toEqual(expected);
    expect(view).not.toHaveProperty('requiredStatuses');
    // The documented defaults, spelled out so a changed default is noticed.
    expect(view).toMatchObject({ mode: 'single', concurrency: 1 });
  });

  test('getQueue afterwards answers the same object', async () => {
    const targetBranch = freshBranch('same');
    const created = await createQueue(targetBranch);
    const res = await getQueue(targetBranch);
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual(created);
  });

  test.each([
    ['PARALLEL', 'parallel'],
    ['Parallel', 'parallel'],
    ['parallel', 'parallel'],
    ['SINGLE', 'single'],
  ])('mode %s is accepted case-insensitively and answered as %s', async (given, shown) => {
    const view = await createQueue(freshBranch('mode'), { mode: given });
    expect(view.mode).toBe(shown);
  });

  test('an unknown mode is a 400 naming the field', async () => {
    const res = await h.post('/v1/createQueue', { repo: repo(), targetBranch: freshBranch('badmode'), mode: 'serial' }, token);
    expectPlainError(res, 400, /mode/);
  });

  test.each([
    [1, 200],
    [4294967295, 200],
    [0, 400],
    [-1, 400],
    [4294967296, 400],
    [1.5, 400],
    ['3', 200], // Strings of digits: what real CI clients send.
    ['3a', 400],
    [null, 400],
  ])('concurrency %p answers %i', async (concurrency, status) => {
    const targetBranch = freshBranch('conc');
    const res = await h.post('/v1/createQueue', { repo: repo(), targetBranch, concurrency }, token);
    if (status === 200) {
      expect(res.statusCode).toBe(200);
      expect(json(res).concurrency).toBe(Number(concurrency));
      // And it was stored as given (a number).
      expect(json(await getQueue(targetBranch)).concurrency).toBe(Number(concurrency));
    } else {
      expectPlainError(res, 400, /concurrency/);
      // Nothing was created.
      expectPlainError(await getQueue(targetBranch), 404);
    }
  });

  test.each([
    ['repo', (b: Record<string, unknown>) => delete b.repo, /repo/],
    ['targetBranch', (b: Record<string, unknown>) => delete b.targetBranch, /targetBranch/],
    ['repo.owner', (b: Record<string, unknown>) => delete (b.repo as Record<string, unknown>).owner, /repo\.owner/],
    ['repo.host', (b: Record<string, unknown>) => delete (b.repo as Record<string, unknown>).host, /repo\.host/],
    ['repo.name', (b: Record<string, unknown>) => delete (b.repo as Record<string, unknown>).name, /repo\.name/],
  ])('missing %s is a 400 whose body names the field', async (_field, strip, mentions) => {
    const body: Record<string, unknown> = { repo: repo(), targetBranch: freshBranch('missing') };
    strip(body);
    const res = await h.post('/v1/createQueue', body, token);
    expectPlainError(res, 400, mentions);
  });

  test.each([
    ['repo.owner', { repo: { ...repo(), owner: 42 } }, /repo\.owner/],
    ['targetBranch', { targetBranch: 7 }, /targetBranch/],
    ['targetBranch', { targetBranch: '' }, /targetBranch/],
    ['repo', { repo: 'acme/widgets' }, /repo/],
  ])('a wrongly typed %s is a 400 naming it', async (_field, override, mentions) => {
    const res = await h.post('/v1/createQueue', { repo: repo(), targetBranch: freshBranch('type'), ...override }, token);
    expectPlainError(res, 400, mentions);
  });

  test.each([
    [{ concurrency: 0 }, "Field 'concurrency' must be at least 1."],
    [{ concurrency: 4294967296 }, "Field 'concurrency' must be at most 4294967295."],
    [{ concurrency: 1.5 }, "Field 'concurrency' must be an integer."],
    [{ concurrency: '3a' }, "Field 'concurrency' must be a number."],
    [{ mode: 'serial' }, "Field 'mode' must be one of: single, parallel."],
    [{ repo: { host: 'github.com', name: 'widgets' } }, "Field 'repo.owner' is required."],
    [{ repo: { ...repo(), owner: 'a/b' } }, "Field 'repo.owner' must not contain slashes, whitespace or control characters."],
    [{ targetBranch: undefined }, "Field 'targetBranch' is required."],
    [{ targetBranch: 'feature..x' }, "Field 'targetBranch' must be a valid git branch name."],
  ])('the 400 for %p is the sentence %p', async (override, sentence) => {
    const res = await h.post('/v1/createQueue', { repo: repo(), targetBranch: freshBranch('msg'), ...override }, token);
    expectPlainError(res, 400);
    expect(res.body).toBe(sentence);
  });

  test('several problems: the first is named and the rest counted', async () => {
    const res = await h.post('/v1/createQueue', { concurrency: 0 }, token);
    expectPlainError(res, 400);
    expect(res.body).toMatch(/^Field '(repo|targetBranch|concurrency)' .*\(and 2 more problems\)\.$/);
  });

  test('a second createQueue for the same repository and branch is a 409', async () => {
    const targetBranch = freshBranch('dup');
    await createQueue(targetBranch, { concurrency: 3 });
    const again = await h.post('/v1/createQueue', { repo: repo(), targetBranch, concurrency: 5 }, token);
    expectPlainError(again, 409, new RegExp(targetBranch));
    // The first queue is untouched.
    expect(json(await getQueue(targetBranch)).concurrency).toBe(3);
  });

  test('concurrent createQueue for one branch: exactly one 200, the others 409', async () => {
    const targetBranch = freshBranch('race');
    const results = await Promise.all(Array.from({ length: 6 }, () => h.post('/v1/createQueue', { repo: repo(), targetBranch }, token)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409, 409, 409]);
  });

  test('the repository is matched case-insensitively for uniqueness (GitHub names are)', async () => {
    const targetBranch = freshBranch('case');
    await createQueue(targetBranch);
    const again = await h.post('/v1/createQueue', { repo: repo('ACME', 'Widgets', 'GitHub.com'), targetBranch }, token);
    expectPlainError(again, 409);
  });

  test('branch names are case-sensitive: another spelling is another queue', async () => {
    const targetBranch = freshBranch('Case');
    await createQueue(targetBranch);
    await createQueue(targetBranch.toLowerCase());
  });

  test('unknown extra fields are ignored, not rejected, and not echoed', async () => {
    const targetBranch = freshBranch('extra');
    const res = await h.post(
      '/v1/createQueue',
      { repo: { ...repo(), id: 99 }, targetBranch, mode: 'parallel', 'x-source': 'terraform', batch: true, somethingElse: { a: 1 } },
      token,
    );
    expect(res.statusCode).toBe(200);
    const view = json(res);
    expect(view).not.toHaveProperty('x-source');
    expect(view).not.toHaveProperty('somethingElse');
    expect(view.repo).toEqual(repo());
    expect(view.mode).toBe('parallel');
    // createQueue takes only mode and concurrency: batch stays at its default.
    expect(view.batch).toBe(DEFAULT_QUEUE_CONFIG.batch);
  });
});

describe('POST /v1/getQueue', () => {
  test('answers state, configuration and enqueued pull requests with their states', async () => {
    const targetBranch = freshBranch('get');
    await createQueue(targetBranch);
    const submitted = await h.post('/v1/submitPullRequest', { repo: repo(), targetBranch, pr: { number: 41 } }, token);
    expect(submitted.statusCode).toBe(200);
    const view = json(await getQueue(targetBranch));
    expect(view.state).toBe('RUNNING');
    expect(view.branch).toBe(targetBranch);
    expect(configOf(view)).toMatchObject({ mode: 'single', concurrency: 1 });
    const entries = view.enqueuedPullRequests as Record<string, unknown>[];
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ prNumber: 41, state: 'NOT_READY', isCurrentlySubmittedToQueue: true });
  });

  test('enqueued pull requests are listed in queue order: priority first, then submission order', async () => {
    const targetBranch = freshBranch('get-order');
    await createQueue(targetBranch);
    for (const [number, priority] of [[1, 'low'], [2, 'medium'], [3, 'urgent'], [4, 100], [5, 10]] as const) {
      const res = await h.post('/v1/submitPullRequest', { repo: repo(), targetBranch, pr: { number }, priority }, token);
      expect(res.statusCode).toBe(200);
    }
    const entries = json(await getQueue(targetBranch)).enqueuedPullRequests as Record<string, unknown>[];
    expect(entries.map((e) => [e.prNumber, e.priorityValue])).toEqual([
      [3, 0],
      [5, 10],
      [2, 100],
      [4, 100],
      [1, 200],
    ]);
  });

  test('each enqueued pull request is shaped exactly like the getSubmittedPullRequest answer', async () => {
    const targetBranch = freshBranch('get-shape');
    await createQueue(targetBranch, { mode: 'parallel' });
    const setTargets = await h.post(
      '/v1/setImpactedTargets',
      { repo: repo(), targetBranch, pr: { number: 12, sha: 'abc1234abc1234abc1234abc1234abc1234abc12' }, impactedTargets: ['//a', '//b'] },
      token,
    );
    expect(setTargets.statusCode).toBe(200);
    for (const [number, extra] of [[11, { priority: 'high', noBatch: true }], [12, {}]] as const) {
      expect((await h.post('/v1/submitPullRequest', { repo: repo(), targetBranch, pr: { number }, ...extra }, token)).statusCode).toBe(200);
    }
    const entries = json(await getQueue(targetBranch)).enqueuedPullRequests as Record<string, unknown>[];
    expect(entries).toHaveLength(2);
    for (const listed of entries) {
      const single = await h.post('/v1/getSubmittedPullRequest', { repo: repo(), targetBranch, pr: { number: listed.prNumber } }, token);
      expect(listed).toEqual(json(single));
    }
    expect(entries[0]).toMatchObject({ prNumber: 11, priorityName: 'high', priorityValue: 10, noBatch: true, skipTheLine: false });
    expect(entries[1]).toMatchObject({
      prNumber: 12,
      impactedTargets: ['//a', '//b'],
      readiness: { hasImpactedTargets: true, requiresImpactedTargets: true },
    });
  });

  test('a cancelled pull request is no longer listed', async () => {
    const targetBranch = freshBranch('get-cancel');
    await createQueue(targetBranch);
    for (const number of [1, 2]) {
      expect((await h.post('/v1/submitPullRequest', { repo: repo(), targetBranch, pr: { number } }, token)).statusCode).toBe(200);
    }
    expect((await h.post('/v1/cancelPullRequest', { repo: repo(), targetBranch, pr: { number: 1 } }, token)).statusCode).toBe(200);
    const entries = json(await getQueue(targetBranch)).enqueuedPullRequests as Record<string, unknown>[];
    expect(entries.map((e) => e.prNumber)).toEqual([2]);
  });

  test('an unknown queue is a 404 naming it', async () => {
    const targetBranch = freshBranch('nope');
    expectPlainError(await getQueue(targetBranch), 404, new RegExp(targetBranch));
  });

  test('a queue of another repository of the same organization is not found under this one', async () => {
    const targetBranch = freshBranch('other-repo');
    await createQueue(targetBranch, {}, repo('acme', 'gadgets'));
    expectPlainError(await getQueue(targetBranch, repo('acme', 'widgets')), 404);
  });

  test('a missing targetBranch is a 400 naming it', async () => {
    expectPlainError(await h.post('/v1/getQueue', { repo: repo() }, token), 400, /targetBranch/);
  });
});

describe('POST /v1/updateQueue', () => {
  const changes: [string, unknown][] = [
    ['mode', 'parallel'],
    ['concurrency', 7],
    ['batch', true],
    ['batchingMinSize', 4],
    ['batchingMaxWaitTimeMinutes', 15],
    ['bisectionConcurrency', 3],
    ['pendingFailureDepth', 2],
    ['canOptimisticallyMerge', true],
    ['testingTimeoutMinutes', 90],
    ['mergeMethod', 'rebase'],
    ['requiredStatuses', ['ci/build', 'ci/test']],
    ['commentsEnabled', false],
    ['commandsEnabled', false],
    ['statusCheckEnabled', false],
    ['enqueueingLabel', 'ready-to-merge'],
    ['createPrsForTestingBranches', true],
    ['directMergeMode', 'always'],
  ];

  test.each(changes)('%s changes and every other setting stays', async (key, value) => {
    const targetBranch = freshBranch(`upd-${key}`);
    const before = configOf(await createQueue(targetBranch));
    expect(before[key]).not.toEqual(value);
    const res = await updateQueue(targetBranch, { [key]: value });
    expect(res.statusCode).toBe(200);
    const answered = json(res);
    const expected = { ...before, [key]: value };
    expect(configOf(answered)).toEqual(expected);
    // The change is stored, not just echoed.
    const after = json(await getQueue(targetBranch));
    expect(configOf(after)).toEqual(expected);
    expect(after.state).toBe('RUNNING');
    expect(after.id).toBe(answered.id);
  });

  test('several settings at once; omitted ones keep their last value, not the default', async () => {
    const targetBranch = freshBranch('multi');
    await createQueue(targetBranch, { concurrency: 5 });
    const first = await updateQueue(targetBranch, { batch: true, batchingMinSize: 3, mergeMethod: 'merge_commit' });
    expect(first.statusCode).toBe(200);
    const second = await updateQueue(targetBranch, { testingTimeoutMinutes: 30 });
    expect(second.statusCode).toBe(200);
    expect(json(second)).toMatchObject({
      concurrency: 5,
      batch: true,
      batchingMinSize: 3,
      mergeMethod: 'merge_commit',
      testingTimeoutMinutes: 30,
      mode: 'single',
    });
  });

  test('concurrent updates of different settings are all kept (no lost update)', async () => {
    const targetBranch = freshBranch('upd-race');
    await createQueue(targetBranch);
    const results = await Promise.all(changes.map(([key, value]) => updateQueue(targetBranch, { [key]: value })));
    expect(results.map((r) => r.statusCode)).toEqual(changes.map(() => 200));
    const after = json(await getQueue(targetBranch));
    expect(changes.map(([key]) => [key, after[key]])).toEqual(changes);
  });

  test('an update with no setting at all changes nothing and answers the queue', async () => {
    const targetBranch = freshBranch('noop');
    const created = await createQueue(targetBranch, { mode: 'parallel', concurrency: 2 });
    const res = await updateQueue(targetBranch, {});
    expect(res.statusCode).toBe(200);
    expect(configOf(json(res))).toEqual(configOf(created));
  });

  test('enum inputs are case-insensitive and answered canonically', async () => {
    const targetBranch = freshBranch('enum-case');
    await createQueue(targetBranch);
    const res = await updateQueue(targetBranch, { mode: 'Parallel', mergeMethod: 'MERGE_COMMIT', directMergeMode: 'ALWAYS', state: 'draining' });
    expect(res.statusCode).toBe(200);
    expect(json(res)).toMatchObject({ mode: 'parallel', mergeMethod: 'merge_commit', directMergeMode: 'always', state: 'DRAINING' });
  });

  describe('integer bounds', () => {
    const zeroAllowed = ['pendingFailureDepth', 'batchingMaxWaitTimeMinutes'];
    const oneMinimum = ['concurrency', 'batchingMinSize', 'bisectionConcurrency', 'testingTimeoutMinutes'];

    test.each(zeroAllowed)('%s accepts 0', async (key) => {
      const targetBranch = freshBranch(`zero-${key}`);
      await createQueue(targetBranch);
      await updateQueue(targetBranch, { [key]: 5 });
      const res = await updateQueue(targetBranch, { [key]: 0 });
      expect(res.statusCode).toBe(200);
      expect(json(res)[key]).toBe(0);
    });

    test.each(oneMinimum)('%s refuses 0 with a 400 naming it and keeps its value', async (key) => {
      const targetBranch = freshBranch(`zero-${key}`);
      const before = await createQueue(targetBranch);
      expectPlainError(await updateQueue(targetBranch, { [key]: 0 }), 400, new RegExp(key));
      expect(configOf(json(await getQueue(targetBranch)))).toEqual(configOf(before));
    });

    test.each([...zeroAllowed, ...oneMinimum])('%s accepts 4294967295 and refuses 4294967296, -1, 2.5 and "3a"', async (key) => {
      const targetBranch = freshBranch(`max-${key}`);
      await createQueue(targetBranch);
      const max = await updateQueue(targetBranch, { [key]: 4294967295 });
      expect(max.statusCode).toBe(200);
      expect(json(max)[key]).toBe(4294967295);
      for (const bad of [4294967296, -1, 2.5, '3a']) {
        expectPlainError(await updateQueue(targetBranch, { [key]: bad }), 400, new RegExp(key));
      }
      expect(json(await getQueue(targetBranch))[key]).toBe(4294967295);
    });
  });

  test.each([
    ['batch', 'yes'],
    ['mergeMethod', 'fast_forward'],
    ['directMergeMode', 'sometimes'],
    ['enqueueingLabel', ''],
    ['requiredStatuses', 'ci/build'],
    ['requiredStatuses', [1, 2]],
    ['deleteRequiredStatuses', false],
  ])('%s = %p is a 400 naming the field', async (key, value) => {
    const targetBranch = freshBranch(`bad-${key}`);
    await createQueue(targetBranch);
    expectPlainError(await updateQueue(targetBranch, { [key]: value }), 400, new RegExp(key));
  });

  test.each([
    ['paused', 'PAUSED'],
    ['PAUSED', 'PAUSED'],
    ['Draining', 'DRAINING'],
  ])('state %s makes the queue %s, and RUNNING resumes it', async (given, shown) => {
    const targetBranch = freshBranch('state');
    await createQueue(targetBranch);
    const res = await updateQueue(targetBranch, { state: given });
    expect(res.statusCode).toBe(200);
    expect(json(res).state).toBe(shown);
    expect(json(await getQueue(targetBranch)).state).toBe(shown);
    // Another change leaves the state alone.
    expect(json(await updateQueue(targetBranch, { concurrency: 2 })).state).toBe(shown);
    const resumed = await updateQueue(targetBranch, { state: 'running' });
    expect(json(resumed).state).toBe('RUNNING');
  });

  test.each(['SWITCHING_MODES', 'switching_modes', 'STOPPED'])('state %s cannot be set by a client (400)', async (state) => {
    const targetBranch = freshBranch('bad-state');
    await createQueue(targetBranch);
    expectPlainError(await updateQueue(targetBranch, { state }), 400, /state/);
    expect(json(await getQueue(targetBranch)).state).toBe('RUNNING');
  });

  test('requiredStatuses set, then deleteRequiredStatuses: true removes them (branch protection decides again)', async () => {
    const targetBranch = freshBranch('statuses');
    await createQueue(targetBranch);
    const set = await updateQueue(targetBranch, { requiredStatuses: ['ci/build', 'ci/lint'] });
    expect(json(set).requiredStatuses).toEqual(['ci/build', 'ci/lint']);
    // An unrelated change keeps them.
    const other = await updateQueue(targetBranch, { concurrency: 2 });
    expect(json(other).requiredStatuses).toEqual(['ci/build', 'ci/lint']);
    const removed = await updateQueue(targetBranch, { deleteRequiredStatuses: true });
    expect(removed.statusCode).toBe(200);
    expect(json(removed)).not.toHaveProperty('requiredStatuses');
    const read = json(await getQueue(targetBranch));
    expect(read).not.toHaveProperty('requiredStatuses');
    expect(read.concurrency).toBe(2);
  });

  test('an empty requiredStatuses list is kept as an empty list, not confused with "absent"', async () => {
    const targetBranch = freshBranch('statuses-empty');
    await createQueue(targetBranch);
    const res = await updateQueue(targetBranch, { requiredStatuses: [] });
    expect(res.statusCode).toBe(200);
    expect(json(res).requiredStatuses).toEqual([]);
    expect(json(await getQueue(targetBranch)).requiredStatuses).toEqual([]);
  });

  test('requiredStatuses and deleteRequiredStatuses together are a 400, and nothing changes', async () => {
    const targetBranch = freshBranch('statuses-both');
    await createQueue(targetBranch);
    await updateQueue(targetBranch, { requiredStatuses: ['ci/build'] });
    const res = await updateQueue(targetBranch, { requiredStatuses: ['ci/other'], deleteRequiredStatuses: true, concurrency: 9 });
    expectPlainError(res, 400, /requiredStatuses/);
    const read = json(await getQueue(targetBranch));
    expect(read.requiredStatuses).toEqual(['ci/build']);
    expect(read.concurrency).toBe(1);
  });

  test('an unknown queue is a 404', async () => {
    expectPlainError(await updateQueue(freshBranch('upd-missing'), { concurrency: 2 }), 404);
  });

  test('changing mode of an empty queue switches at once (RUNNING)', async () => {
    const targetBranch = freshBranch('switch-empty');
    await createQueue(targetBranch);
    const res = await updateQueue(targetBranch, { mode: 'parallel' });
    expect(json(res)).toMatchObject({ mode: 'parallel', state: 'RUNNING' });
  });

  // How a queue enters and leaves SWITCHING_MODES (a run in flight) is the engine's:
  // test/e2e/sandbox-queue.test.ts. Here: what the API does while it is switching.
  test('while SWITCHING_MODES, the queue shows it and settings writes are a 409; pausing and resuming work', async () => {
    const targetBranch = freshBranch('switching');
    const created = await createQueue(targetBranch);
    await updateQueue(targetBranch, { mode: 'parallel' });
    await h.stores.queues.update(created.id as string, { modeSwitchStartedAt: new Date(), updatedAt: new Date() });
    const read = json(await getQueue(targetBranch));
    expect(read.state).toBe('SWITCHING_MODES');
    expect(read.mode).toBe('parallel');

    for (const change of [{ concurrency: 3 }, { mode: 'single' }, { state: 'PAUSED', batch: true }, { batch: true }, { deleteRequiredStatuses: true }]) {
      expectPlainError(await updateQueue(targetBranch, change), 409, /SWITCHING_MODES/);
    }
    const after = json(await getQueue(targetBranch));
    expect(after).toMatchObject({ state: 'SWITCHING_MODES', mode: 'parallel', concurrency: 1, batch: false });

    // An operator stops a queue at any time: the pause is what it shows (it merges nothing, a switching queue does).
    const paused = await updateQueue(targetBranch, { state: 'PAUSED' });
    expect(paused.statusCode).toBe(200);
    expect(json(paused)).toMatchObject({ state: 'PAUSED', mode: 'parallel', concurrency: 1 });
    expect(json(await updateQueue(targetBranch, { state: 'DRAINING' })).state).toBe('DRAINING');
    // The engine, told of the pause, holds no run of the old mode (this switch was written to the record only): it ended.
    expect(json(await updateQueue(targetBranch, { state: 'RUNNING' }))).toMatchObject({ state: 'RUNNING', mode: 'parallel' });
  });

  test('a state-only change with a PR in TESTING does not start a mode switch', async () => {
    const targetBranch = freshBranch('no-switch');
    const created = await createQueue(targetBranch);
    const at = new Date();
    await h.stores.entries.insert({
      queueId: created.id as string,
      prNumber: 502,
      attempt: 1,
      state: 'TESTING',
      priority: 100,
      noBatch: false,
      submittedAt: at,
      stateChangedAt: at,
      concludedAt: null,
      facts: null,
      timeline: [{ at, state: 'TESTING', reason: 'ready' }],
    });
    expect(json(await updateQueue(targetBranch, { mode: 'single', concurrency: 2 })).state).toBe('RUNNING');
    expect(json(await updateQueue(targetBranch, { state: 'PAUSED' })).state).toBe('PAUSED');
  });
});

describe('POST /v1/deleteQueue', () => {
  test('deletes an empty queue (200 with a JSON object); getQueue is then a 404', async () => {
    const targetBranch = freshBranch('del');
    const created = await createQueue(targetBranch);
    const res = await h.post('/v1/deleteQueue', { repo: repo(), targetBranch }, token);
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({ deleted: true, id: created.id });
    expectPlainError(await getQueue(targetBranch), 404);
    // And the branch can have a new queue, with fresh defaults.
    const again = await createQueue(targetBranch);
    expect(again.id).not.toBe(created.id);
  });

  test('a queue whose PRs were all cancelled can be deleted', async () => {
    const targetBranch = freshBranch('del-cancelled');
    await createQueue(targetBranch);
    expect((await h.post('/v1/submitPullRequest', { repo: repo(), targetBranch, pr: { number: 8 } }, token)).statusCode).toBe(200);
    expect((await h.post('/v1/cancelPullRequest', { repo: repo(), targetBranch, pr: { number: 8 } }, token)).statusCode).toBe(200);
    expect((await h.post('/v1/deleteQueue', { repo: repo(), targetBranch }, token)).statusCode).toBe(200);
  });

  test('a submit right after the queue was deleted and created again goes to the new queue (the recent queue read is forgotten)', async () => {
    const targetBranch = freshBranch('del-again');
    const first = await createQueue(targetBranch);
    // Reads the queue into the short-lived cache submits and status reads use.
    expect((await h.post('/v1/submitPullRequest', { repo: repo(), targetBranch, pr: { number: 3 } }, token)).statusCode).toBe(200);
    expect((await h.post('/v1/cancelPullRequest', { repo: repo(), targetBranch, pr: { number: 3 } }, token)).statusCode).toBe(200);
    expect((await h.post('/v1/deleteQueue', { repo: repo(), targetBranch }, token)).statusCode).toBe(200);
    expectPlainError(await h.post('/v1/submitPullRequest', { repo: repo(), targetBranch, pr: { number: 4 } }, token), 404);
    const second = await createQueue(targetBranch);
    expect(second.id).not.toBe(first.id);
    expect((await h.post('/v1/submitPullRequest', { repo: repo(), targetBranch, pr: { number: 4 } }, token)).statusCode).toBe(200);
    const read = json(await getQueue(targetBranch));
    expect(read.id).toBe(second.id);
    expect((read.enqueuedPullRequests as Record<string, unknown>[]).map((e) => e.prNumber)).toEqual([4]);
  });

  test('is a 409 while a PR is enqueued, and the queue and its PR stay', async () => {
    const targetBranch = freshBranch('del-busy');
    await createQueue(targetBranch);
    expect((await h.post('/v1/submitPullRequest', { repo: repo(), targetBranch, pr: { number: 9 } }, token)).statusCode).toBe(200);
    const res = await h.post('/v1/deleteQueue', { repo: repo(), targetBranch }, token);
    expectPlainError(res, 409, /enqueued|cancel/i);
    const read = json(await getQueue(targetBranch));
    expect((read.enqueuedPullRequests as Record<string, unknown>[]).map((e) => e.prNumber)).toEqual([9]);
    const pr = await h.post('/v1/getSubmittedPullRequest', { repo: repo(), targetBranch, pr: { number: 9 } }, token);
    expect(pr.statusCode).toBe(200);
  });

  test('an unknown queue is a 404', async () => {
    expectPlainError(await h.post('/v1/deleteQueue', { repo: repo(), targetBranch: freshBranch('del-missing') }, token), 404);
  });

  test('a missing repo is a 400 naming it', async () => {
    expectPlainError(await h.post('/v1/deleteQueue', { targetBranch: 'main' }, token), 400, /repo/);
  });
});
