/**
 * A race lost on the host is not an outage: when another writer moved the staging branch under a build
 * (StagingMoved), GitHub answered fine. The runner retries it with back-off without telling the engine (nor the
 * operator) that the host is unavailable, unless it keeps being lost; an ordinary host failure is still an outage
 * from its first failure. The runner's host step (carryOutThroughOutages), with a host that fails as told.
 */
import { StagingMoved } from '../../src/adapters/github/test-branch.js';
import type { ServiceMetrics } from '../../src/observability/service-metrics.js';
import type { GitHost } from '../../src/ports/git-host.js';
import { isTransientHostError } from '../../src/ports/host-errors.js';
import type { ActionContext } from '../../src/runner/execute-actions.js';
import { carryOutThroughOutages, RACES_LOST_BEFORE_OUTAGE, type OutageTracking } from '../../src/runner/host-outage.js';
import type { RunnerInput } from '../../src/runner/runner-model.js';

/** Carries out reading the base's head while the host throws `failures` in turn, then answers. */
async function carryOut(failures: unknown[]) {
  const reports: RunnerInput[] = [];
  const outageGauge: number[] = [];
  const retries: string[] = [];
  const warnings: string[] = [];
  const refusals: string[] = [];
  const delays: number[] = [];
  /** Refusals logged and inputs reported, in the order they came. */
  const sequence: string[] = [];
  let calls = 0;
  const host = {
    readBranchHead: async () => {
      const failure = failures[calls++];
      if (failure !== undefined) throw failure;
      return 'b1';
    },
  } as unknown as GitHost;
  const ctx = {
    queue: { id: 'q1', repo: { host: 'github.com', owner: 'acme', name: 'widgets' }, targetBranch: 'main' },
    log: {
      info() {},
      warn() {},
      error: (details: { err?: unknown }, message: string) => {
        refusals.push(`${message}: ${(details.err as Error).message}`);
        sequence.push('refused');
      },
    },
    hosts: { forHost: () => host },
    report: async (input: RunnerInput) => void reports.push(input),
  } as unknown as ActionContext;
  const tracking: OutageTracking = { queueId: 'q1', outage: null };
  const done = await carryOutThroughOutages(ctx, { type: 'read_base_head' }, tracking, {
    log: { info() {}, warn: (_details, message) => void warnings.push(message), error() {} },
    metrics: {
      hostOutage: { set: (_labels: object, value: number) => void outageGauge.push(value) },
      hostRetries: { inc: ({ action }: { action: string }) => void retries.push(action) },
    } as unknown as ServiceMetrics,
    now: () => Date.parse('2024-05-01T12:00:00Z'),
    delayMs: (attempt) => attempt,
    sleep: async (ms) => void delays.push(ms),
    mayAct: async () => true,
    report: async (input) => {
      reports.push(input);
      sequence.push(input.type);
    },
  });
  const outageReports = reports.filter((r) => r.type === 'host_unavailable' || r.type === 'host_recovered');
  return { done, calls, reports, outageReports, outageGauge, retries, warnings, refusals, delays, tracking, sequence };
}

const moved = () => new StagingMoved('mq-staging/main moved while the run was built');
/** A race lost on an answer a ruleset's refusal gives too (GitHub's 422 "Reference update failed"). */
const movedOn = (message = 'Reference update failed') => new StagingMoved('mq-staging/main moved while the run was built', { cause: Object.assign(new Error(message), { status: 422 }) });
const badGateway = () => Object.assign(new Error('Bad Gateway'), { status: 502 });

test('a moved staging branch is a race lost, still retried (transient)', () => {
  expect(isTransientHostError(moved())).toBe(true);
});

test('the staging branch moved twice, then the action succeeds: retried with back-off, no outage reported, shown or logged', async () => {
  const result = await carryOut([moved(), moved()]);

  expect(result.done).toBe(true);
  expect(result.calls).toBe(3);
  expect(result.delays).toEqual([1, 2]);
  expect(result.retries).toEqual(['read_base_head', 'read_base_head']);
  expect(result.outageReports).toEqual([]);
  expect(result.outageGauge).toEqual([]);
  expect(result.warnings).toEqual([]);
  expect(result.tracking.outage).toBeNull();
  expect(result.reports).toEqual([{ type: 'base_moved', sha: 'b1' }]);
});

test('the staging branch keeps moving past the races allowed: an outage, reported once, then its recovery', async () => {
  const result = await carryOut(Array.from({ length: RACES_LOST_BEFORE_OUTAGE + 2 }, moved));

  expect(result.done).toBe(true);
  expect(result.calls).toBe(RACES_LOST_BEFORE_OUTAGE + 3);
  expect(result.outageReports).toEqual([{ type: 'host_unavailable', message: expect.stringMatching(/^read_base_head: .*moved/), cause: 'actions' }, { type: 'host_recovered' }]);
  expect(result.outageGauge).toEqual([1, 1, 0]);
  expect(result.warnings[0]).toMatch(/repository host is failing/);
  expect(result.tracking.outage).toBeNull();
});

test('an ordinary host failure is an outage from its first failure', async () => {
  const result = await carryOut([Object.assign(new Error('Bad Gateway'), { status: 502 })]);

  expect(result.done).toBe(true);
  expect(result.outageReports).toEqual([{ type: 'host_unavailable', message: 'read_base_head: 502: Bad Gateway', cause: 'actions' }, { type: 'host_recovered' }]);
  expect(result.outageGauge).toEqual([1, 0]);
  expect(result.warnings).toHaveLength(1);
});

test('the same refusal-like answer behind every race lost: past the races allowed, settled as that refusal in GitHub\'s words', async () => {
  const result = await carryOut(Array.from({ length: RACES_LOST_BEFORE_OUTAGE + 1 }, () => movedOn()));

  expect(result.done).toBe(true);
  expect(result.calls).toBe(RACES_LOST_BEFORE_OUTAGE + 1);
  expect(result.refusals).toEqual(['the host refused a queue action: Reference update failed']);
  expect(result.outageReports).toEqual([]);
});

// Found by review: every race counted, so races of another kind (or a 502 between) made the first refusal-like answer a refusal.
test.each([
  ['races without such an answer before it', [...Array.from({ length: RACES_LOST_BEFORE_OUTAGE }, moved), movedOn()]],
  ['a 502 between the same answers', [...Array.from({ length: RACES_LOST_BEFORE_OUTAGE }, () => movedOn()), badGateway(), ...Array.from({ length: RACES_LOST_BEFORE_OUTAGE }, () => movedOn())]],
  ['two answers taking turns', Array.from({ length: 2 * RACES_LOST_BEFORE_OUTAGE }, (_, i) => movedOn(i % 2 ? 'Reference update failed' : 'Reference already exists'))],
])('%s: no refusal; the action is asked again until it goes through', async (_, failures) => {
  const result = await carryOut(failures);

  expect(result.done).toBe(true);
  expect(result.calls).toBe(failures.length + 1);
  expect(result.refusals).toEqual([]);
  expect(result.reports).toContainEqual({ type: 'base_moved', sha: 'b1' });
  // Past the races allowed (or at the 502), an outage the operator sees, and its end.
  expect(result.outageReports.map((r) => r.type)).toEqual(['host_unavailable', 'host_recovered']);
});

// Found by review: a refusal settled during an outage left the engine waiting for a recovery nobody reported. A refusal
// ends only the actions' outage (a 403 may be the very access lost), and only after the verdict, so no round starts first.
test.each([
  ['a refusal', [badGateway(), Object.assign(new Error('Not Found'), { status: 404 })]],
  ['the same refusal-like answer past the races allowed', [badGateway(), ...Array.from({ length: RACES_LOST_BEFORE_OUTAGE + 1 }, () => movedOn())]],
])('an outage, then %s: the refusal is settled, then the actions\' outage is over (the host answered)', async (_, failures) => {
  const result = await carryOut(failures);

  expect(result.done).toBe(true);
  expect(result.refusals).toHaveLength(1);
  expect(result.outageReports).toEqual([expect.objectContaining({ type: 'host_unavailable', cause: 'actions' }), { type: 'host_recovered', cause: 'actions' }]);
  expect(result.sequence).toEqual(['host_unavailable', 'refused', 'host_recovered']);
  expect(result.tracking.outage).toBeNull();
  expect(result.outageGauge.at(-1)).toBe(0);
});
