import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { repo, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { testRunFixture } from '../support/test-run-fixture.js';

/**
 * Property tests over every v1 endpoint: random, malformed and almost-valid
 * bodies, raw non-JSON text and random content types. Whatever arrives, the
 * server answers; never a 500; every non-2xx is a 4xx in plain text with a
 * sentence in it (SEED-SPEC.md "Errors", API-SUPPLEMENT.md "General"). And no
 * MongoDB operator smuggled in a field ever reaches a query.
 */

/** Runs per property; FUZZ_RUNS=1000 for a deeper search. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 70);

let harness: ApiHarness;
let token: string;
const R = repo('acme', 'fuzz');
const GUARDED = repo('acme', 'guarded');
let testRunId = '';
let cursor = '';

beforeAll(async () => {
  harness = await startApiHarness({ prefix: 'fuzz' });
  token = await harness.tokenFor('acme');
  for (const r of [R, GUARDED]) {
    expect((await post('createQueue', { repo: r, targetBranch: 'main' })).statusCode).toBe(200);
    for (const number of [1, 2, 3]) {
      expect((await post('submitPullRequest', { repo: r, targetBranch: 'main', pr: { number } })).statusCode).toBe(200);
    }
  }
  const queue = await harness.stores.queues.find(R, 'main');
  const run = await harness.stores.testRuns.insert(
    testRunFixture(queue!.id, { testBranchSha: null, testedPullRequests: [{ entryId: 'x', prNumber: 1, headSha: 'a'.repeat(40) }], createdAt: new Date() }),
  );
  testRunId = run.id;
  const page = await post('listPullRequests', { repo: R, targetBranch: 'main', take: 1 });
  cursor = page.json().nextCursor;
  expect(typeof cursor).toBe('string');
});

afterAll(async () => {
  await harness?.close();
});

function post(path: string, body: unknown): Promise<LightMyRequestResponse> {
  return harness.post(`/v1/${path}`, body, token);
}

function raw(path: string, payload: string, contentType?: string): Promise<LightMyRequestResponse> {
  return harness.app.inject({
    method: 'POST',
    url: `/v1/${path}`,
    headers: { 'x-api-token': token, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
    payload,
  });
}

/** A valid request for every POST endpoint, on the fuzz queue. */
function templates(): Record<string, Record<string, unknown>> {
  const id = { repo: { ...R }, targetBranch: 'main' };
  return {
    submitPullRequest: { ...id, pr: { number: 1 }, priority: 'high', noBatch: false },
    cancelPullRequest: { ...id, pr: { number: 2 } },
    restartTestsOnPullRequest: { ...id, pr: { number: 1 } },
    getSubmittedPullRequest: { ...id, pr: { number: 1 }, includeTimeline: true },
    setImpactedTargets: { ...id, pr: { number: 1, sha: 'abcdef12abcdef12abcdef12abcdef12abcdef12' }, impactedTargets: ['//a:b', '//c:d'] },
    getMergeQueueTestingDetails: { ...id, testRunId, pr: { number: 1 } },
    createQueue: { ...id, targetBranch: 'fuzz-created', mode: 'parallel', concurrency: 2 },
    deleteQueue: { ...id, targetBranch: 'fuzz-created' },
    getQueue: { ...id },
    updateQueue: {
      ...id,
      state: 'RUNNING',
      mode: 'single',
      concurrency: 3,
      batch: true,
      batchingMinSize: 1,
      batchingMaxWaitTimeMinutes: 0,
      bisectionConcurrency: 1,
      pendingFailureDepth: 0,
      canOptimisticallyMerge: false,
      testingTimeoutMinutes: 60,
      mergeMethod: 'squash',
      requiredStatuses: ['ci'],
      commentsEnabled: true,
      commandsEnabled: true,
      statusCheckEnabled: true,
      enqueueingLabel: 'mq',
      createPrsForTestingBranches: false,
      directMergeMode: 'off',
    },
    listPullRequests: { ...id, state: ['NOT_READY', 'cancelled'], since: '2000-01-01T00:00:00Z', until: '2100-01-01T00:00:00Z', take: 10, cursor },
  };
}
const POST_ENDPOINTS = Object.keys(templates());

type Path = (string | number)[];

/** Every path of a template: objects, their fields, and list items. */
function pathsOf(value: unknown, prefix: Path = []): Path[] {
  const paths: Path[] = prefix.length > 0 ? [prefix] : [];
  if (Array.isArray(value)) value.forEach((item, i) => paths.push(...pathsOf(item, [...prefix, i])));
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) paths.push(...pathsOf(item, [...prefix, key]));
  }
  return paths;
}

/** A deep copy with the value at `path` replaced (own properties, even `__proto__`). */
function replaceAt(value: unknown, path: Path, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string | number, ...Path];
  // A parent an earlier replacement turned into a scalar becomes an object again.
  const parent = value !== null && typeof value === 'object' ? (value as Record<string | number, unknown>) : {};
  const copy = (Array.isArray(parent) ? [...parent] : { ...parent }) as Record<string | number, unknown>;
  Object.defineProperty(copy, head, {
    value: replaceAt(Object.prototype.hasOwnProperty.call(parent, head) ? parent[head] : undefined, rest, replacement),
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return copy;
}

/** An object whose own key is `key` (a literal would set the prototype for `__proto__`). */
const withOwnKey = (key: string, value: unknown): Record<string, unknown> => JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(value)}}`);

const operatorObject = fc.oneof(
  fc.constantFrom<unknown>(
    { $gt: 0 },
    { $gt: '' },
    { $ne: 'x' },
    { $ne: null },
    { $where: 'sleep(5000) || true' },
    { $regex: '.*' },
    { $in: ['main', 1, 2] },
    { $exists: true },
    { $expr: { $eq: [1, 1] } },
    { $or: [{}] },
  ),
  fc.record({ $gt: fc.jsonValue() }),
);

const pollution = fc.constantFrom<unknown>(
  withOwnKey('__proto__', { polluted: true }),
  withOwnKey('constructor', { prototype: { polluted: true } }),
  withOwnKey('prototype', { polluted: true }),
  { toString: 'x', valueOf: 1, hasOwnProperty: null },
);

const nastyNumber = fc.oneof(
  fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 31, 2 ** 32, 2 ** 53, -1, 0, 0.5, -0, 1e-300, 4294967296, 4294967295),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

const nastyString = fc.oneof(
  fc.constantFrom(
    'NaN',
    'Infinity',
    '-Infinity',
    '1e999',
    '0x10',
    ' 1',
    '',
    ' ',
    'null',
    'undefined',
    'true',
    '$gt',
    '{"$gt":0}',
    '../../etc/passwd',
    'main\u0000',
    '\u202emain',
    '😀'.repeat(100),
    'a'.repeat(5000),
    'x'.repeat(300_000),
    'ALL',
    'urgent',
    '__proto__',
  ),
  fc.string({ maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 100 }),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
);

/** Wrong types, out-of-range numbers, operators, pollution keys, strange text, null. */
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: operatorObject },
  { weight: 2, arbitrary: pollution },
  { weight: 3, arbitrary: nastyNumber },
  { weight: 4, arbitrary: nastyString },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], [[]], [{}]) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(nastyString, { maxLength: 5 }) },
);

/** A valid body with one field (or one new field) replaced by a nasty value. */
function almostValid(endpoint: string): fc.Arbitrary<unknown> {
  const template = templates()[endpoint]!;
  const paths = pathsOf(template);
  const newKeys = fc.constantFrom('__proto__', 'constructor', '$where', '$gt', 'x-source', 'prototype', '');
  return fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...paths), nastyValue).map(([path, value]) => replaceAt(templates()[endpoint], path, value)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom<Path>([], ...paths.filter((p) => typeof p[p.length - 1] === 'string')), newKeys, nastyValue)
        .map(([at, key, value]) => replaceAt(templates()[endpoint], at.length === 0 ? [key] : [...at.slice(0, -1), at[at.length - 1]!], value)),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...paths), nastyValue, fc.constantFrom(...paths), nastyValue)
        .map(([p1, v1, p2, v2]) => replaceAt(replaceAt(templates()[endpoint], p1, v1), p2, v2)),
    },
  );
}

/** Serialises anything: what JSON cannot hold becomes a raw, possibly empty, text. */
function serialise(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? '' : text;
  } catch {
    return String(Object.prototype.toString.call(value));
  }
}

const rawText = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '{',
    '}',
    '{"repo":',
    'null',
    '[]',
    '"string"',
    '123',
    'true',
    '\ufeff{}',
    '{"a":1,}',
    "{'repo': 1}",
    'NaN',
    '{"pr":{"number":NaN}}',
    '{"pr":{"number":Infinity}}',
    '{"pr":{"number":1e999}}',
    '['.repeat(20000) + ']'.repeat(20000),
    '{"a":'.repeat(5000) + '1' + '}'.repeat(5000),
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"repo":{"__proto__":{"polluted":true},"host":"github.com","owner":"acme","name":"fuzz"},"targetBranch":"main"}',
    '{"repo":{"host":"github.com","owner":"acme","name":"fuzz"},"targetBranch":"main","targetBranch":{"$ne":1}}',
    '\u0000',
    'repo=acme&targetBranch=main',
  ),
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

const contentType = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8') },
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'application/json;',
    'application/json; foo',
    'application/jsonx',
    'application/vnd.api+json',
    'application/merge-patch+json',
    'text/plain',
    'text/json',
    'text/html',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=xyz',
    'application/octet-stream',
    '*/*',
    'json',
    ';',
    '',
    ' ',
    'application/',
    '/json',
  ),
  fc.stringMatching(/^[a-z]{1,12}\/[a-z0-9.+-]{1,20}(; ?[a-z]{1,8}=[a-z0-9-]{0,10})?$/),
  fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
);

/** The server's contract for any answer: 2xx JSON, or a 4xx with a plain-text sentence. */
function expectWellFormed(res: LightMyRequestResponse, what: string) {
  const context = `${what} -> ${res.statusCode} ${String(res.headers['content-type'])}: ${res.body.slice(0, 300)}`;
  if (res.statusCode >= 200 && res.statusCode < 300) {
    if (what.startsWith('GET')) {
      expect([context, res.headers['content-type']]).toEqual([context, 'text/plain; version=0.0.4; charset=utf-8']);
    } else {
      expect([context, res.headers['content-type']]).toEqual([context, expect.stringMatching(/^application\/json/)]);
      expect([context, typeof JSON.parse(res.body)]).toEqual([context, 'object']);
    }
    return;
  }
  expect([context, res.statusCode >= 400 && res.statusCode < 500]).toEqual([context, true]);
  expect([context, res.headers['content-type']]).toEqual([context, expect.stringMatching(/^text\/plain/)]);
  expect([context, res.body.trim().length > 0]).toEqual([context, true]);
  expect([context, /\n\s+at /.test(res.body)]).toEqual([context, false]);
}

async function expectStillServing() {
  expect((await harness.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  const res = await post('getSubmittedPullRequest', { repo: GUARDED, targetBranch: 'main', pr: { number: 1 } });
  expect(res.statusCode).toBe(200);
  expect(res.json().state).toBe('NOT_READY');
}

const PROPERTY_TIMEOUT = 60_000;

describe.each(POST_ENDPOINTS)('POST /v1/%s under random bodies', (endpoint) => {
  it(
    'answers every JSON body, however wrong, with 2xx JSON or a plain-text 4xx',
    async () => {
      const body = fc.oneof(
        { weight: 5, arbitrary: almostValid(endpoint) },
        { weight: 2, arbitrary: fc.anything({ maxDepth: 3 }) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
      );
      await fc.assert(
        fc.asyncProperty(body, async (value) => {
          const payload = serialise(value);
          expectWellFormed(await raw(endpoint, payload, 'application/json'), `POST ${endpoint} ${payload.slice(0, 300)}`);
        }),
        { numRuns: RUNS },
      );
      await expectStillServing();
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'answers raw text and random content types with a plain-text 4xx unless they are JSON',
    async () => {
      const request = fc.record({
        payload: fc.oneof(rawText, almostValid(endpoint).map(serialise)),
        contentType: fc.option(contentType, { nil: undefined }),
      });
      await fc.assert(
        fc.asyncProperty(request, async ({ payload, contentType: type }) => {
          let res: LightMyRequestResponse;
          try {
            res = await raw(endpoint, payload, type);
          } catch (error) {
            // Only a header the HTTP layer itself refuses to send may fail before the server.
            expect(String(error)).toMatch(/header/i);
            return;
          }
          expectWellFormed(res, `POST ${endpoint} [${String(type)}] ${payload.slice(0, 300)}`);
        }),
        { numRuns: RUNS },
      );
      await expectStillServing();
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'refuses with a 400 any field of a valid body replaced by a query operator',
    async () => {
      const paths = pathsOf(templates()[endpoint]);
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...paths), operatorObject, async (path, operator) => {
          const body = replaceAt(templates()[endpoint], path, operator);
          const res = await post(endpoint, body);
          expectWellFormed(res, `POST ${endpoint} ${JSON.stringify(body)}`);
          expect([path.join('.'), res.statusCode]).toEqual([path.join('.'), 400]);
        }),
        { numRuns: Math.min(RUNS, paths.length * 4) },
      );
    },
    PROPERTY_TIMEOUT,
  );
});

describe('values that pass the schema but reach the stores', () => {
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const objectId = fc.stringMatching(/^[0-9a-f]{24}$/);

  it(
    'answers any well-formed-looking cursor with a page or a 400',
    async () => {
      const cursorArb = fc.oneof(
        fc.record({ t: fc.oneof(fc.double(), fc.integer(), fc.constantFrom(8.64e15, 8.64e15 + 1, -8.64e15 - 1, 1e300, -1e300)), id: objectId }).map(b64),
        fc.record({ t: fc.jsonValue(), id: fc.jsonValue() }).map(b64),
        fc.jsonValue().map(b64),
        fc.base64String({ minLength: 1, maxLength: 200 }),
      );
      await fc.assert(
        fc.asyncProperty(cursorArb, async (value) => {
          const res = await post('listPullRequests', { repo: R, targetBranch: 'main', cursor: value });
          expectWellFormed(res, `listPullRequests cursor=${value}`);
          expect([value, [200, 400].includes(res.statusCode)]).toEqual([value, true]);
        }),
        { numRuns: RUNS * 2 },
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'answers any since/until date with a page or a 400',
    async () => {
      const when = fc.oneof(
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        fc
          .tuple(fc.date({ min: new Date('1900-01-01'), max: new Date('2200-01-01'), noInvalidDate: true }), fc.integer({ min: -14, max: 14 }))
          .map(([d, h]) => d.toISOString().replace('Z', `${h < 0 ? '-' : '+'}${String(Math.abs(h)).padStart(2, '0')}:00`)),
      );
      await fc.assert(
        fc.asyncProperty(fc.option(when, { nil: undefined }), fc.option(when, { nil: undefined }), async (since, until) => {
          const res = await post('listPullRequests', { repo: R, targetBranch: 'main', since, until });
          expectWellFormed(res, `listPullRequests since=${since} until=${until}`);
          expect([since, until, [200, 400].includes(res.statusCode)]).toEqual([since, until, true]);
        }),
        { numRuns: RUNS * 2 },
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'answers any test run id with the run, a 404 or a 400',
    async () => {
      const id = fc.oneof(objectId, fc.stringMatching(/^[0-9A-Fa-f]{1,64}$/), fc.string({ minLength: 1, maxLength: 64 }), fc.constant(testRunId));
      await fc.assert(
        fc.asyncProperty(id, async (value) => {
          const res = await post('getMergeQueueTestingDetails', { repo: R, targetBranch: 'main', testRunId: value });
          expectWellFormed(res, `getMergeQueueTestingDetails testRunId=${value}`);
          expect([value, res.statusCode]).toEqual([value, value.toLowerCase() === testRunId ? 200 : 404]);
        }),
        { numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT,
  );
});

describe('GET /v1/getMergeQueueMetrics under random query strings', () => {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('repo', 'repoHost') },
    { weight: 1, arbitrary: fc.constantFrom('repo[$ne]', '__proto__', 'constructor', '$where', 'repo[]', 'x') },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  );
  const value = fc.oneof(
    fc.constantFrom('acme/fuzz', 'acme/guarded', 'acme/nope', 'other/repo', 'github.com', 'GitHub.com', 'acme', '/', 'a/b/c', '', 'x'.repeat(5000)),
    nastyString,
  );
  const query = fc.oneof(
    fc.array(fc.tuple(key, value), { maxLength: 4 }).map((pairs) => new URLSearchParams(pairs).toString()),
    fc.string({ unit: 'grapheme-ascii', maxLength: 80 }).map((s) => s.replace(/[#\s]/g, '')),
  );

  it(
    'answers the metrics text or a plain-text 4xx',
    async () => {
      await fc.assert(
        fc.asyncProperty(query, async (q) => {
          let res: LightMyRequestResponse;
          try {
            res = await harness.app.inject({ method: 'GET', url: `/v1/getMergeQueueMetrics?${q}`, headers: { 'x-api-token': token } });
          } catch (error) {
            expect(String(error)).toMatch(/url|path|character/i);
            return;
          }
          expectWellFormed(res, `GET getMergeQueueMetrics?${q}`);
        }),
        { numRuns: RUNS },
      );
      await expectStillServing();
    },
    PROPERTY_TIMEOUT,
  );

  it('ignores bodies and content types on the GET endpoint', async () => {
    await fc.assert(
      fc.asyncProperty(rawText, fc.option(contentType, { nil: undefined }), async (payload, type) => {
        let res: LightMyRequestResponse;
        try {
          res = await harness.app.inject({
            method: 'GET',
            url: '/v1/getMergeQueueMetrics',
            headers: { 'x-api-token': token, ...(type === undefined ? {} : { 'content-type': type }) },
            payload,
          });
        } catch (error) {
          expect(String(error)).toMatch(/header/i);
          return;
        }
        expectWellFormed(res, `GET getMergeQueueMetrics [${String(type)}] ${payload.slice(0, 200)}`);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});

describe('no operator injection', () => {
  const guardedIdentity = { repo: GUARDED, targetBranch: 'main' };

  it.each([
    ['getQueue', { repo: { host: 'github.com', owner: 'acme', name: { $ne: 'x' } }, targetBranch: 'main' }],
    ['getQueue', { repo: { host: 'github.com', owner: { $regex: '.*' }, name: 'guarded' }, targetBranch: 'main' }],
    ['getQueue', { repo: GUARDED, targetBranch: { $ne: 'x' } }],
    ['deleteQueue', { repo: { host: 'github.com', owner: 'acme', name: { $ne: 'x' } }, targetBranch: 'main' }],
    ['deleteQueue', { repo: GUARDED, targetBranch: { $gt: '' } }],
    ['updateQueue', { repo: { host: { $ne: '' }, owner: 'acme', name: 'guarded' }, targetBranch: 'main', state: 'PAUSED' }],
    ['submitPullRequest', { repo: { host: 'github.com', owner: 'acme', name: { $ne: 'x' } }, targetBranch: 'main', pr: { number: 9 } }],
    ['getSubmittedPullRequest', { ...guardedIdentity, pr: { number: { $gt: 0 } } }],
    ['getSubmittedPullRequest', { ...guardedIdentity, pr: { $where: 'true' } }],
    ['cancelPullRequest', { ...guardedIdentity, pr: { number: { $gt: 0 } } }],
    ['cancelPullRequest', { ...guardedIdentity, pr: { number: { $in: [1, 2, 3] } } }],
    ['restartTestsOnPullRequest', { ...guardedIdentity, pr: { number: { $ne: 0 } } }],
    ['setImpactedTargets', { ...guardedIdentity, pr: { number: { $gt: 0 }, sha: 'abcd1234abcd1234abcd1234abcd1234abcd1234' }, impactedTargets: ['x'] }],
    ['setImpactedTargets', { ...guardedIdentity, pr: { number: 1, sha: { $gt: '' } }, impactedTargets: ['x'] }],
    ['setImpactedTargets', { ...guardedIdentity, pr: { number: 1, sha: 'abcd1234abcd1234abcd1234abcd1234abcd1234' }, impactedTargets: { $set: ['x'] } }],
    ['getMergeQueueTestingDetails', { ...guardedIdentity, testRunId: { $ne: null } }],
    ['getMergeQueueTestingDetails', { ...guardedIdentity, pr: { number: { $gt: 0 } } }],
    ['listPullRequests', { ...guardedIdentity, state: { $ne: 'MERGED' } }],
    ['listPullRequests', { ...guardedIdentity, since: { $gt: '' } }],
    ['listPullRequests', { ...guardedIdentity, cursor: { $gt: '' } }],
    ['createQueue', { repo: { host: 'github.com', owner: 'acme', name: { $ne: 'x' } }, targetBranch: 'main' }],
  ])('%s refuses %j with a 400 and changes nothing', async (endpoint, body) => {
    const res = await post(endpoint, body);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body.length).toBeGreaterThan(0);

    const queue = await post('getQueue', guardedIdentity);
    expect(queue.statusCode).toBe(200);
    expect(queue.json().state).toBe('RUNNING');
    expect(queue.json().enqueuedPullRequests.map((p: { prNumber: number; state: string }) => `${p.prNumber}:${p.state}`).sort()).toEqual([
      '1:NOT_READY',
      '2:NOT_READY',
      '3:NOT_READY',
    ]);
  });

  it('stores no operator-looking key from an ignored extra field', async () => {
    const body = { ...guardedIdentity, pr: { number: 2, $where: 'true' }, $set: { state: 'MERGED' }, priority: 'low' };
    const res = await post('submitPullRequest', body);
    expect(res.statusCode).toBe(200);
    expect(res.json().state).toBe('NOT_READY');
    expect(res.json().prNumber).toBe(2);
    const queue = await harness.stores.queues.find(GUARDED, 'main');
    const entry = await harness.stores.entries.find(queue!.id, 2);
    expect(entry!.state).toBe('NOT_READY');
    expect(JSON.stringify(entry)).not.toMatch(/\$where|\$set/);
  });

  it('leaves Object.prototype untouched after all of the above', () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as unknown as Record<string, unknown>).polluted).toBeUndefined();
  });
});
