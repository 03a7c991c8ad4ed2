/**
 * A host outage is not a verdict: while the runner retries a failing host, the
 * engine starts, merges and times out nothing, and no PR changes state or place;
 * the outage does not count toward a run's test timeout.
 */
import type { EngineAction } from '../../src/engine/model.js';
import { MINUTE, queueDriver } from './support/queue-driver.js';

const queue = () => queueDriver({ concurrency: 1, testingTimeoutMinutes: 60, tuning: 'fixed' }); // one PR per run

test('a run does not time out during an outage, and the outage does not count toward its timeout', () => {
  const q = queue();
  q.submit(1, 0);
  q.send({ type: 'host_unavailable', message: 'start_run: 502: Bad Gateway' }, 10 * MINUTE);
  // Well past the 60-minute timeout, still in the outage: nothing fails, nothing is cancelled.
  const during = q.send({ type: 'tick' }, 90 * MINUTE);
  expect(during.actions.filter((a) => a.type === 'cancel_run' || a.type === 'publish_status')).toEqual([]);
  expect(q.states()).toEqual({ 1: 'TESTING' });
  expect(q.state.hostOutage).toEqual({ since: 10 * MINUTE, message: 'start_run: 502: Bad Gateway', causes: ['actions'] });
  // A second failure keeps the outage's start.
  q.send({ type: 'host_unavailable', message: 'merge: request timed out' }, 95 * MINUTE);
  expect(q.state.hostOutage?.since).toBe(10 * MINUTE);
  // Recovered at 100 min: 90 minutes of outage do not count, so the run has 10 of its 60 minutes behind it.
  const recovered = q.send({ type: 'host_recovered' }, 100 * MINUTE);
  expect(q.state.hostOutage).toBeNull();
  expect(q.state.runs[0]?.startedAt).toBe(90 * MINUTE);
  expect(recovered.actions).toContainEqual({ type: 'wake_at', at: 150 * MINUTE });
  q.send({ type: 'tick' }, 149 * MINUTE);
  expect(q.states()).toEqual({ 1: 'TESTING' });
  q.send({ type: 'tick' }, 150 * MINUTE);
  expect(q.state.entries).toEqual([]); // Timed out at last, by its own time.
  expect(q.log).toContainEqual(expect.objectContaining({ type: 'publish_status', prNumber: 1, state: 'FAILED', reason: 'timed_out' }));
  // The run is cancelled on the host as timed out, so its record can say which checks never reported.
  expect(q.log).toContainEqual({ type: 'cancel_run', runId: 'r1', timedOut: true });
});

test('during an outage nothing starts or merges; PRs keep their order and state; afterwards the queue goes on', () => {
  const q = queue();
  q.submit(1, 0);
  const passed = q.send({ type: 'run_finished', runId: 'r1', passed: true }, MINUTE);
  const merge = passed.actions.find((a) => a.type === 'merge');
  expect(merge).toBeDefined();
  // The merge call fails: the runner retries it (the merge stays requested), and tells the engine.
  q.send({ type: 'host_unavailable', message: 'merge: 503' }, 2 * MINUTE);
  const arrivals = [q.submit(2, 3 * MINUTE), q.submit(3, 4 * MINUTE)];
  expect(arrivals.flatMap((d) => d.actions).filter((a) => a.type === 'start_run' || a.type === 'merge')).toEqual([]);
  expect(q.states()).toEqual({ 1: 'TESTS_PASSED', 2: 'PENDING', 3: 'PENDING' });
  // Recovered: the next PR in line starts at once, on top of the one whose merge is in flight.
  const recovered = q.send({ type: 'host_recovered' }, 10 * MINUTE);
  const started = recovered.actions.filter((a): a is Extract<EngineAction, { type: 'start_run' }> => a.type === 'start_run');
  expect(started.map((a) => [a.run.ahead.map((h) => h.entryId), a.run.unit.map((h) => h.entryId)])).toEqual([[['e1'], ['e2']]]);
  q.send({ type: 'merge_finished', runId: 'r1', ok: true, newBaseSha: 'm1' }, 11 * MINUTE);
  expect(q.states()).toEqual({ 2: 'TESTING', 3: 'PENDING' });
});

test('a recovery without an outage changes nothing', () => {
  const q = queue();
  q.submit(1, 0);
  const before = structuredClone(q.state);
  const decision = q.send({ type: 'host_recovered' }, MINUTE);
  expect(q.state).toEqual(before);
  expect(decision.actions.filter((a) => a.type !== 'wake_at')).toEqual([]);
});

test('access coming back (an installation event) does not end failures the runner still sees; an action going through ends both', () => {
  const q = queue();
  q.submit(1, 0);
  q.send({ type: 'host_unavailable', message: 'start_run: 502: Bad Gateway', cause: 'actions' }, 10 * MINUTE);
  q.send({ type: 'host_recovered', cause: 'access' }, 20 * MINUTE);
  // Still out: past the timeout, nothing fails.
  q.send({ type: 'tick' }, 90 * MINUTE);
  expect(q.states()).toEqual({ 1: 'TESTING' });
  expect(q.state.hostOutage).toEqual({ since: 10 * MINUTE, message: 'start_run: 502: Bad Gateway', causes: ['actions'] });
  // Access lost meanwhile, then the runner's action goes through: that proves both, the outage ends.
  q.send({ type: 'host_unavailable', message: 'the App was uninstalled', cause: 'access' }, 95 * MINUTE);
  expect(q.state.hostOutage?.causes).toEqual(['access', 'actions']);
  q.send({ type: 'host_recovered' }, 100 * MINUTE);
  expect(q.state.hostOutage).toBeNull();
  expect(q.state.runs[0]?.startedAt).toBe(90 * MINUTE);
});

test('an outage only access caused ends when access comes back; one saved before causes were kept counts as the runner\'s', () => {
  const q = queue();
  q.submit(1, 0);
  q.send({ type: 'host_unavailable', message: 'the App was suspended', cause: 'access' }, 10 * MINUTE);
  q.send({ type: 'host_recovered', cause: 'access' }, 20 * MINUTE);
  expect(q.state.hostOutage).toBeNull();
  // A state saved before causes: its outage came from the runner's actions, so access coming back leaves it.
  q.state.hostOutage = { since: 30 * MINUTE, message: 'merge: 502' };
  q.send({ type: 'host_recovered', cause: 'access' }, 40 * MINUTE);
  expect(q.state.hostOutage).toEqual({ since: 30 * MINUTE, message: 'merge: 502', causes: ['actions'] });
});

// Found by review: a refusal settled during an outage reported a recovery without cause, ending an access outage too.
test('a refusal ending the runner\'s outage (cause actions) leaves access lost meanwhile', () => {
  const q = queue();
  q.submit(1, 0);
  q.send({ type: 'host_unavailable', message: 'merge: 502: Bad Gateway', cause: 'actions' }, 10 * MINUTE);
  q.send({ type: 'host_unavailable', message: 'the App was suspended', cause: 'access' }, 15 * MINUTE);
  q.send({ type: 'host_recovered', cause: 'actions' }, 20 * MINUTE);
  expect(q.state.hostOutage).toEqual({ since: 10 * MINUTE, message: 'the App was suspended', causes: ['access'] });
});
