import type { LightMyRequestResponse } from 'fastify';
import type { QueueEntryRecord, TestRunRecord } from '../../src/domain/records.js';
import { testRunFixture } from '../support/test-run-fixture.js';
import { startApiHarness, repo, type ApiHarness } from '../support/api-harness.js';

/**
 * GET /v1/getMergeQueueMetrics: the text exposition format (version 0.0.4),
 * the metric names of API-SUPPLEMENT.md, and values that follow the data.
 */

// ---------------------------------------------------------------------------
// A small, strict parser of the Prometheus text exposition format 0.0.4.
// ---------------------------------------------------------------------------

type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Family {
  name: string;
  help?: string;
  type: MetricType;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function parseValue(text: string, line: number): number {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`line ${line}: bad value ${JSON.stringify(text)}`);
  return Number(text);
}

/** Label set `{a="x",b="y"}` starting at `text[0] === '{'`; answers the labels and the rest of the line. */
function parseLabels(text: string, line: number): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  const fail = (why: string): never => {
    throw new Error(`line ${line}: ${why} in ${JSON.stringify(text)}`);
  };
  for (;;) {
    if (text[i] === '}') return { labels, rest: text.slice(i + 1) };
    const name = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(i))?.[0];
    if (!name) fail('bad label name');
    const labelName = name as string;
    i += labelName.length;
    if (text[i] !== '=' || text[i + 1] !== '"') fail('expected ="');
    i += 2;
    let value = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) fail('unterminated label value');
      if (c === '"') break;
      if (c === '\\') {
        const next = text[i + 1];
        if (next === '\\') value += '\\';
        else if (next === '"') value += '"';
        else if (next === 'n') value += '\n';
        else fail(`bad escape \\${String(next)}`);
        i += 2;
        continue;
      }
      value += c;
      i += 1;
    }
    i += 1;
    if (labelName in labels) fail(`label ${labelName} repeated`);
    labels[labelName] = value;
    if (text[i] === ',') i += 1;
    else if (text[i] !== '}') fail('expected , or }');
  }
}

/** The family a sample belongs to: histogram samples carry _bucket, _sum, _count. */
function familyOf(sampleName: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(sampleName);
  if (direct && direct.type !== 'histogram' && direct.type !== 'summary') return direct;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const family = families.get(sampleName.slice(0, -suffix.length));
    if (family && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket'))) return family;
  }
  return direct;
}

function parseExposition(text: string): Map<string, Family> {
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  let current: Family | undefined;
  const lines = text.split('\n');
  lines.pop();
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    if (raw.includes('\r')) throw new Error(`line ${line}: carriage return`);
    if (raw.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (!meta) return; // A plain comment.
      const [, kind, name = '', rest = ''] = meta;
      if (!METRIC_NAME.test(name)) throw new Error(`line ${line}: bad metric name ${name}`);
      if (closed.has(name)) throw new Error(`line ${line}: ${name} appears in two places`);
      let family = families.get(name);
      if (family && family.samples.length > 0) throw new Error(`line ${line}: ${kind} of ${name} after its samples`);
      if (!family) {
        family = { name, type: 'untyped', samples: [] };
        families.set(name, family);
      }
      if (current && current !== family) closed.add(current.name);
      current = family;
      if (kind === 'HELP') {
        if (family.help !== undefined) throw new Error(`line ${line}: second HELP for ${name}`);
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) throw new Error(`line ${line}: bad escape in HELP`);
        family.help = rest.replace(/\\(\\|n)/g, (_m, c: string) => (c === 'n' ? '\n' : '\\'));
      } else {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) throw new Error(`line ${line}: bad type ${rest}`);
        if (family.type !== 'untyped' || (family as { typed?: boolean }).typed) throw new Error(`line ${line}: second TYPE for ${name}`);
        family.type = rest as MetricType;
        (family as { typed?: boolean }).typed = true;
      }
      return;
    }
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(raw)?.[0];
    if (!name) throw new Error(`line ${line}: bad sample line ${JSON.stringify(raw)}`);
    let rest = raw.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest, line));
    const parts = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
    if (!parts) throw new Error(`line ${line}: expected " value [timestamp]" after the labels, got ${JSON.stringify(rest)}`);
    for (const label of Object.keys(labels)) if (!LABEL_NAME.test(label)) throw new Error(`line ${line}: bad label ${label}`);
    let family = familyOf(name, families);
    if (!family) {
      family = { name, type: 'untyped', samples: [] };
      families.set(name, family);
    }
    if (closed.has(family.name)) throw new Error(`line ${line}: samples of ${family.name} are not together`);
    if (current && current !== family) closed.add(current.name);
    current = family;
    const key = name + JSON.stringify(Object.entries(labels).sort());
    if (family.samples.some((s) => s.name + JSON.stringify(Object.entries(s.labels).sort()) === key)) {
      throw new Error(`line ${line}: duplicate series ${key}`);
    }
    family.samples.push({ name, labels, value: parseValue(parts[1] ?? '', line) });
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** Per label set: le buckets ascending and cumulative, +Inf present and equal to _count, a _sum. */
function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const group = groups.get(key) ?? { buckets: [] };
    groups.set(key, group);
    if (sample.name === `${family.name}_bucket`) {
      if (le === undefined) throw new Error(`${family.name}: bucket without le`);
      group.buckets.push([parseValue(le, 0), sample.value]);
    } else if (sample.name === `${family.name}_sum`) group.sum = sample.value;
    else if (sample.name === `${family.name}_count`) group.count = sample.value;
    else throw new Error(`${family.name}: unexpected sample ${sample.name}`);
  }
  for (const [key, group] of groups) {
    const bounds = group.buckets.map(([b]) => b);
    if (bounds.some((b, i) => i > 0 && b <= (bounds[i - 1] as number))) throw new Error(`${family.name}${key}: le not ascending`);
    if (bounds[bounds.length - 1] !== Infinity) throw new Error(`${family.name}${key}: no +Inf bucket`);
    const counts = group.buckets.map(([, c]) => c);
    if (counts.some((c, i) => i > 0 && c < (counts[i - 1] as number))) throw new Error(`${family.name}${key}: buckets not cumulative`);
    if (group.count === undefined || group.sum === undefined) throw new Error(`${family.name}${key}: missing _sum or _count`);
    if (counts[counts.length - 1] !== group.count) throw new Error(`${family.name}${key}: +Inf bucket differs from _count`);
  }
}

// ---------------------------------------------------------------------------

const GAUGES = ['mq_depth_current', 'mq_awaiting_mergeability', 'mq_testing_slots_active'];
const WINDOWED = ['mq_pr_conclusions_1h_total', 'mq_pr_restarts_1h_total'];
const HISTOGRAMS = ['mq_pr_wait_duration_1h_seconds', 'mq_pr_test_duration_1h_seconds', 'mq_pr_time_in_queue_1h_seconds'];
const BUCKETS = ['60', '300', '600', '900', '1800', '3600', '5400', '7200', '+Inf'];

const START = new Date('2031-03-04T10:00:00.000Z');
let clock = START;
const advance = (minutes: number) => {
  clock = new Date(clock.getTime() + minutes * 60_000);
};

let h: ApiHarness;
let token: string;
let tokenOther: string;

beforeAll(async () => {
  // The entries are written here beneath the runner: read fresh by every scrape, not from the views' cache.
  h = await startApiHarness({ prefix: 'metrics', now: () => clock, enqueuedCacheMaxAgeMs: 0 });
  token = await h.tokenFor('acme');
  tokenOther = await h.tokenFor('globex');
});

afterAll(async () => {
  await h.close();
});

function scrape(query = '', t: string | undefined = token): Promise<LightMyRequestResponse> {
  return h.app.inject({ method: 'GET', url: `/v1/getMergeQueueMetrics${query}`, headers: t ? { 'x-api-token': t } : {} });
}

async function metrics(query = '', t = token): Promise<Map<string, Family>> {
  const res = await scrape(query, t);
  expect(res.statusCode).toBe(200);
  return parseExposition(res.body);
}

/** The value of one series; throws when it is absent. */
function value(families: Map<string, Family>, sampleName: string, labels: Record<string, string>): number {
  const familyName = sampleName.replace(/_(bucket|sum|count)$/, '');
  const family = families.get(sampleName) ?? families.get(familyName);
  const sample = family?.samples.find(
    (s) => s.name === sampleName && Object.keys(labels).length === Object.keys(s.labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (!sample) throw new Error(`no series ${sampleName}${JSON.stringify(labels)}`);
  return sample.value;
}

function expectPlainError(res: LightMyRequestResponse, status: number, mentions?: RegExp): void {
  expect({ status: res.statusCode, type: res.headers['content-type'] }).toEqual({ status, type: 'text/plain; charset=utf-8' });
  expect(res.body.trim().length).toBeGreaterThan(3);
  if (mentions) expect(res.body).toMatch(mentions);
}

async function createQueue(r: ReturnType<typeof repo>, targetBranch: string, t = token): Promise<string> {
  const res = await h.post('/v1/createQueue', { repo: r, targetBranch }, t);
  expect(res.statusCode).toBe(200);
  return res.json<{ id: string }>().id;
}

function entry(queueId: string, prNumber: number, state: QueueEntryRecord['state'], submittedAt: Date, timeline: QueueEntryRecord['timeline']): Omit<QueueEntryRecord, 'id'> {
  return {
    queueId,
    prNumber,
    attempt: 1,
    state,
    priority: 100,
    noBatch: false,
    submittedAt,
    stateChangedAt: timeline[timeline.length - 1]?.at ?? submittedAt,
    concludedAt: ['MERGED', 'FAILED', 'CANCELLED'].includes(state) ? (timeline[timeline.length - 1]?.at ?? submittedAt) : null,
    facts: null,
    timeline,
  };
}

function run(queueId: string, status: TestRunRecord['status'], createdAt: Date, finishedAt: Date | null): Omit<TestRunRecord, 'id'> {
  return testRunFixture(queueId, { status, createdAt, finishedAt, testedPullRequests: [{ entryId: '0'.repeat(24), prNumber: 1, headSha: 'c'.repeat(40) }] });
}

describe('the strict parser used below', () => {
  test('accepts a well-formed exposition and refuses broken ones', () => {
    const good = '# HELP a_b A thing.\n# TYPE a_b gauge\na_b{x="1",y="q\\"z"} 3\na_b{x="2"} NaN\n';
    expect(value(parseExposition(good), 'a_b', { x: '1', y: 'q"z' })).toBe(3);
    expect(() => parseExposition('a_b 1')).toThrow(/line feed/);
    expect(() => parseExposition('a_b{x="1} 1\n')).toThrow();
    expect(() => parseExposition('a_b{x="1"}  1\n')).toThrow();
    expect(() => parseExposition('a_b{x="\\t"} 1\n')).toThrow(/escape/);
    expect(() => parseExposition('a_b 1\nc 2\na_b{x="1"} 3\n')).toThrow(/together/);
    expect(() => parseExposition('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 0\nh_count 1\n')).toThrow(/cumulative/);
    expect(() => parseExposition('# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 0\nh_count 1\n')).toThrow(/\+Inf/);
    expect(() => parseExposition('a 1\na 2\n')).toThrow(/duplicate/);
    expect(() => parseExposition('a one\n')).toThrow(/bad value/);
  });
});

describe('GET /v1/getMergeQueueMetrics', () => {
  test('answers 200 with exactly text/plain; version=0.0.4; charset=utf-8', async () => {
    await createQueue(repo('acme', 'ct'), 'main');
    const res = await scrape();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(() => parseExposition(res.body)).not.toThrow();
  });

  test('declares every metric with its type and HELP, and each histogram has the documented buckets and labels repo, branch', async () => {
    await createQueue(repo('acme', 'names'), 'main');
    const families = await metrics('?repo=acme/names&repoHost=github.com');
    expect([...families.keys()].sort()).toEqual([...GAUGES, ...WINDOWED, ...HISTOGRAMS].sort());
    for (const name of [...GAUGES, ...WINDOWED]) {
      const family = families.get(name);
      expect([name, family?.type]).toEqual([name, 'gauge']);
      expect(family?.help?.length).toBeGreaterThan(0);
    }
    for (const name of HISTOGRAMS) {
      const family = families.get(name);
      expect([name, family?.type]).toEqual([name, 'histogram']);
      const les = family?.samples.filter((s) => s.name === `${name}_bucket`).map((s) => s.labels.le);
      expect([name, les]).toEqual([name, BUCKETS]);
      for (const sample of family?.samples ?? []) {
        const { le: _le, ...labels } = sample.labels;
        expect(labels).toEqual({ repo: 'acme/names', branch: 'main' });
      }
    }
    for (const name of GAUGES) {
      expect(families.get(name)?.samples.map((s) => s.labels)).toEqual([{ repo: 'acme/names', branch: 'main' }]);
    }
    expect(families.get('mq_pr_conclusions_1h_total')?.samples.map((s) => s.labels.conclusion).sort()).toEqual(['cancelled', 'failed', 'merged']);
    expect(families.get('mq_pr_restarts_1h_total')?.samples.map((s) => s.labels)).toEqual([{ repo: 'acme/names', branch: 'main' }]);
  });

  test('a queue without activity shows zeros everywhere', async () => {
    await createQueue(repo('acme', 'idle'), 'main');
    const families = await metrics('?repo=acme/idle&repoHost=github.com');
    const labels = { repo: 'acme/idle', branch: 'main' };
    for (const name of [...GAUGES, 'mq_pr_restarts_1h_total']) expect([name, value(families, name, labels)]).toEqual([name, 0]);
    for (const conclusion of ['merged', 'failed', 'cancelled']) {
      expect(value(families, 'mq_pr_conclusions_1h_total', { ...labels, conclusion })).toBe(0);
    }
    for (const name of HISTOGRAMS) {
      expect(value(families, `${name}_count`, labels)).toBe(0);
      expect(value(families, `${name}_sum`, labels)).toBe(0);
    }
  });

  test("only the token's organization: queues of another organization never appear", async () => {
    await createQueue(repo('acme', 'mine'), 'main');
    await createQueue(repo('acme', 'mine'), 'release');
    await createQueue(repo('globex', 'theirs'), 'main', tokenOther);
    const ours = await scrape();
    const theirs = await scrape('', tokenOther);
    expect(ours.body).toContain('repo="acme/mine",branch="main"');
    expect(ours.body).toContain('repo="acme/mine",branch="release"');
    expect(ours.body).not.toContain('globex');
    expect(theirs.body).toContain('repo="globex/theirs",branch="main"');
    expect(theirs.body).not.toContain('acme');
    const repos = new Set([...parseExposition(theirs.body).values()].flatMap((f) => f.samples.map((s) => s.labels.repo)));
    expect([...repos]).toEqual(['globex/theirs']);
  });

  test('an organization without queues gets a valid exposition without series', async () => {
    const lonely = await h.tokenFor('initech');
    const res = await scrape('', lonely);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const families = parseExposition(res.body);
    expect([...families.values()].flatMap((f) => f.samples)).toEqual([]);
  });

  test('repo narrows the answer to that repository, all its branches', async () => {
    await createQueue(repo('acme', 'narrow'), 'main');
    await createQueue(repo('acme', 'narrow'), 'dev');
    await createQueue(repo('acme', 'wide'), 'main');
    const res = await scrape('?repo=acme/narrow&repoHost=github.com');
    const series = [...parseExposition(res.body).values()].flatMap((f) => f.samples.map((s) => `${s.labels.repo}@${s.labels.branch}`));
    expect([...new Set(series)].sort()).toEqual(['acme/narrow@dev', 'acme/narrow@main']);
  });

  test('repo without repoHost is a 400 naming repoHost', async () => {
    expectPlainError(await scrape('?repo=acme/mine'), 400, /repoHost/);
  });

  test.each(['acme', 'acme/mine/extra', '/mine', 'acme/', 'acme%20x/mine', ''])('a malformed repo %p is a 400 naming repo', async (given) => {
    const res = await scrape(`?repo=${given}&repoHost=github.com`);
    expectPlainError(res, 400, /repo/);
  });

  test('a malformed repoHost is a 400', async () => {
    expectPlainError(await scrape('?repo=acme/mine&repoHost=git%20hub'), 400, /repoHost/);
  });

  test('a repository of another organization is a 403', async () => {
    expectPlainError(await scrape('?repo=globex/theirs&repoHost=github.com'), 403);
    expectPlainError(await scrape('?repo=acme/mine&repoHost=gitlab.com'), 403);
  });

  test('an unknown repository of its own organization is a 404', async () => {
    expectPlainError(await scrape('?repo=acme/never-created&repoHost=github.com'), 404, /acme\/never-created/);
  });

  test('unknown query parameters are ignored', async () => {
    const res = await scrape('?x-source=grafana&format=json');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  test('label values are escaped (a branch name with a double quote)', async () => {
    await createQueue(repo('acme', 'quoted'), 'fix"quote');
    const res = await scrape('?repo=acme/quoted&repoHost=github.com');
    expect(res.body).toContain('branch="fix\\"quote"');
    expect(value(parseExposition(res.body), 'mq_depth_current', { repo: 'acme/quoted', branch: 'fix"quote' })).toBe(0);
  });
});

describe('values follow the data', () => {
  const r = repo('acme', 'live');
  const labels = { repo: 'acme/live', branch: 'main' };
  const q = '?repo=acme/live&repoHost=github.com';
  let queueId: string;

  beforeAll(async () => {
    clock = START;
    queueId = await createQueue(r, 'main');
  });

  test('submit 2 PRs: depth 2, both awaiting mergeability (no host answered yet)', async () => {
    for (const number of [1, 2]) {
      expect((await h.post('/v1/submitPullRequest', { repo: r, targetBranch: 'main', pr: { number } }, token)).statusCode).toBe(200);
    }
    const families = await metrics(q);
    expect(value(families, 'mq_depth_current', labels)).toBe(2);
    expect(value(families, 'mq_awaiting_mergeability', labels)).toBe(2);
    expect(value(families, 'mq_pr_conclusions_1h_total', { ...labels, conclusion: 'cancelled' })).toBe(0);
  });

  test('cancel one 20 minutes later: cancelled 1, depth 1, one time-in-queue observation of 1200 s', async () => {
    advance(20);
    expect((await h.post('/v1/cancelPullRequest', { repo: r, targetBranch: 'main', pr: { number: 1 } }, token)).statusCode).toBe(200);
    const families = await metrics(q);
    expect(value(families, 'mq_depth_current', labels)).toBe(1);
    expect(value(families, 'mq_awaiting_mergeability', labels)).toBe(1);
    expect(value(families, 'mq_pr_conclusions_1h_total', { ...labels, conclusion: 'cancelled' })).toBe(1);
    expect(value(families, 'mq_pr_conclusions_1h_total', { ...labels, conclusion: 'merged' })).toBe(0);
    expect(value(families, 'mq_pr_conclusions_1h_total', { ...labels, conclusion: 'failed' })).toBe(0);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_count', labels)).toBe(1);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_sum', labels)).toBe(1200);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_bucket', { ...labels, le: '900' })).toBe(0);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_bucket', { ...labels, le: '1800' })).toBe(1);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_bucket', { ...labels, le: '+Inf' })).toBe(1);
    // Cancelling twice is no new conclusion.
    expect((await h.post('/v1/cancelPullRequest', { repo: r, targetBranch: 'main', pr: { number: 1 } }, token)).statusCode).toBe(200);
    expect(value(await metrics(q), 'mq_pr_conclusions_1h_total', { ...labels, conclusion: 'cancelled' })).toBe(1);
  });

  test('a finished test run that took 10 minutes is one test-duration observation in the 600 bucket', async () => {
    const finishedAt = new Date(clock.getTime() - 60_000);
    await h.stores.testRuns.insert(run(queueId, 'succeeded', new Date(finishedAt.getTime() - 10 * 60_000), finishedAt));
    const families = await metrics(q);
    expect(value(families, 'mq_pr_test_duration_1h_seconds_count', labels)).toBe(1);
    expect(value(families, 'mq_pr_test_duration_1h_seconds_sum', labels)).toBe(600);
    expect(value(families, 'mq_pr_test_duration_1h_seconds_bucket', { ...labels, le: '300' })).toBe(0);
    expect(value(families, 'mq_pr_test_duration_1h_seconds_bucket', { ...labels, le: '600' })).toBe(1);
    expect(value(families, 'mq_pr_test_duration_1h_seconds_bucket', { ...labels, le: '7200' })).toBe(1);
    expect(value(families, 'mq_pr_test_duration_1h_seconds_bucket', { ...labels, le: '+Inf' })).toBe(1);
    // A finished run is no active slot.
    expect(value(families, 'mq_testing_slots_active', labels)).toBe(0);
  });

  test('a run in progress is an active testing slot', async () => {
    await h.stores.testRuns.insert(run(queueId, 'in_progress', clock, null));
    const families = await metrics(q);
    expect(value(families, 'mq_testing_slots_active', labels)).toBe(1);
    // It has not finished: no new test-duration observation.
    expect(value(families, 'mq_pr_test_duration_1h_seconds_count', labels)).toBe(1);
  });

  test('a PR that started testing 4 minutes after submission is a wait observation of 240 s; a restart counts once', async () => {
    const submittedAt = new Date(clock.getTime() - 4 * 60_000);
    await h.stores.entries.insert(
      entry(queueId, 3, 'TESTING', submittedAt, [
        { at: submittedAt, state: 'NOT_READY', reason: 'submitted' },
        { at: new Date(submittedAt.getTime() + 60_000), state: 'PENDING', reason: 'ready' },
        { at: clock, state: 'TESTING', reason: 'ready' },
      ]),
    );
    let families = await metrics(q);
    expect(value(families, 'mq_depth_current', labels)).toBe(2);
    // TESTING is not awaiting mergeability.
    expect(value(families, 'mq_awaiting_mergeability', labels)).toBe(1);
    expect(value(families, 'mq_pr_wait_duration_1h_seconds_count', labels)).toBe(1);
    expect(value(families, 'mq_pr_wait_duration_1h_seconds_sum', labels)).toBe(240);
    expect(value(families, 'mq_pr_wait_duration_1h_seconds_bucket', { ...labels, le: '60' })).toBe(0);
    expect(value(families, 'mq_pr_wait_duration_1h_seconds_bucket', { ...labels, le: '300' })).toBe(1);
    expect(value(families, 'mq_pr_restarts_1h_total', labels)).toBe(0);

    advance(1);
    expect((await h.post('/v1/restartTestsOnPullRequest', { repo: r, targetBranch: 'main', pr: { number: 3 } }, token)).statusCode).toBe(200);
    families = await metrics(q);
    expect(value(families, 'mq_pr_restarts_1h_total', labels)).toBe(1);
    expect(value(families, 'mq_depth_current', labels)).toBe(2);
  });

  test('a merged and a failed PR count under their conclusions', async () => {
    const at = new Date(clock.getTime() - 5 * 60_000);
    const submittedAt = new Date(at.getTime() - 50 * 60_000);
    await h.stores.entries.insert(
      entry(queueId, 4, 'MERGED', submittedAt, [
        { at: submittedAt, state: 'NOT_READY', reason: 'submitted' },
        { at, state: 'MERGED', reason: 'merged' },
      ]),
    );
    await h.stores.entries.insert(
      entry(queueId, 5, 'FAILED', submittedAt, [
        { at: submittedAt, state: 'NOT_READY', reason: 'submitted' },
        { at, state: 'FAILED', reason: 'failed_tests' },
      ]),
    );
    const families = await metrics(q);
    expect(value(families, 'mq_pr_conclusions_1h_total', { ...labels, conclusion: 'merged' })).toBe(1);
    expect(value(families, 'mq_pr_conclusions_1h_total', { ...labels, conclusion: 'failed' })).toBe(1);
    expect(value(families, 'mq_pr_conclusions_1h_total', { ...labels, conclusion: 'cancelled' })).toBe(1);
    expect(value(families, 'mq_depth_current', labels)).toBe(2);
    // 50 minutes in the queue each: the 3600 bucket, with the earlier 20-minute cancellation.
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_count', labels)).toBe(3);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_bucket', { ...labels, le: '1800' })).toBe(1);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_bucket', { ...labels, le: '3600' })).toBe(3);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_sum', labels)).toBe(1200 + 3000 + 3000);
  });

  test('a PR cancelled and then submitted again still counts as a cancellation in the hour (each attempt concludes)', async () => {
    const body = { repo: r, targetBranch: 'main', pr: { number: 6 } };
    expect((await h.post('/v1/submitPullRequest', body, token)).statusCode).toBe(200);
    advance(2);
    expect((await h.post('/v1/cancelPullRequest', body, token)).statusCode).toBe(200);
    let families = await metrics(q);
    expect(value(families, 'mq_pr_conclusions_1h_total', { ...labels, conclusion: 'cancelled' })).toBe(2);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_count', labels)).toBe(4);
    advance(1);
    expect((await h.post('/v1/submitPullRequest', body, token)).statusCode).toBe(200);
    families = await metrics(q);
    expect(value(families, 'mq_depth_current', labels)).toBe(3);
    // The first attempt's cancellation happened in the hour and stays counted.
    expect(value(families, 'mq_pr_conclusions_1h_total', { ...labels, conclusion: 'cancelled' })).toBe(2);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_count', labels)).toBe(4);
    advance(1);
    expect((await h.post('/v1/cancelPullRequest', body, token)).statusCode).toBe(200);
    families = await metrics(q);
    expect(value(families, 'mq_depth_current', labels)).toBe(2);
    expect(value(families, 'mq_pr_conclusions_1h_total', { ...labels, conclusion: 'cancelled' })).toBe(3);
    // 1200 s, 3000 s, 3000 s before; now 120 s and 60 s for the two attempts of #6.
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_count', labels)).toBe(5);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_sum', labels)).toBe(1200 + 3000 + 3000 + 120 + 60);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_bucket', { ...labels, le: '60' })).toBe(1);
    expect(value(families, 'mq_pr_time_in_queue_1h_seconds_bucket', { ...labels, le: '300' })).toBe(2);
  });

  test('a restart of a PR that then starts testing again is one restart and one wait observation', async () => {
    const submittedAt = new Date(clock.getTime() - 10 * 60_000);
    const firstTest = new Date(submittedAt.getTime() + 2 * 60_000);
    const restartAt = new Date(submittedAt.getTime() + 5 * 60_000);
    const secondTest = new Date(submittedAt.getTime() + 6 * 60_000);
    await h.stores.entries.insert(
      entry(queueId, 7, 'TESTING', submittedAt, [
        { at: submittedAt, state: 'NOT_READY', reason: 'submitted' },
        { at: firstTest, state: 'TESTING', reason: 'ready' },
        { at: restartAt, state: 'PENDING', reason: 'restart_requested' },
        { at: secondTest, state: 'TESTING', reason: 'ready' },
      ]),
    );
    const families = await metrics(q);
    // #3 restarted once before, #7 once now.
    expect(value(families, 'mq_pr_restarts_1h_total', labels)).toBe(2);
    // #3 waited 240 s, #7 waited 120 s until its first test.
    expect(value(families, 'mq_pr_wait_duration_1h_seconds_count', labels)).toBe(2);
    expect(value(families, 'mq_pr_wait_duration_1h_seconds_sum', labels)).toBe(360);
  });

  test('two hours later the 1h windows are empty while the gauges still show the present', async () => {
    advance(120);
    const families = await metrics(q);
    for (const conclusion of ['merged', 'failed', 'cancelled']) {
      expect([conclusion, value(families, 'mq_pr_conclusions_1h_total', { ...labels, conclusion })]).toEqual([conclusion, 0]);
    }
    expect(value(families, 'mq_pr_restarts_1h_total', labels)).toBe(0);
    for (const name of HISTOGRAMS) expect([name, value(families, `${name}_count`, labels)]).toEqual([name, 0]);
    expect(value(families, 'mq_depth_current', labels)).toBe(3);
    expect(value(families, 'mq_testing_slots_active', labels)).toBe(1);
  });

  test("another organization's activity never shows up in this organization's numbers", async () => {
    await createQueue(repo('globex', 'live'), 'main', tokenOther);
    for (const number of [1, 2, 3]) {
      await h.post('/v1/submitPullRequest', { repo: repo('globex', 'live'), targetBranch: 'main', pr: { number } }, tokenOther);
    }
    const families = await metrics();
    expect(value(families, 'mq_depth_current', labels)).toBe(3);
    expect(() => value(families, 'mq_depth_current', { repo: 'globex/live', branch: 'main' })).toThrow(/no series/);
    const theirs = await metrics('', tokenOther);
    expect(value(theirs, 'mq_depth_current', { repo: 'globex/live', branch: 'main' })).toBe(3);
  });
});
