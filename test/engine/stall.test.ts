/**
 * The stall alert: a running queue with PRs in line that has not moved for
 * stallAlertMinutes says so once (queue.stalled) and once when it moves again
 * (queue.resumed). Idle, paused or switched-off queues never stall.
 */
import { MINUTE, queueDriver } from './support/queue-driver.js';

function queue(config: { stallAlertMinutes?: number; testingTimeoutMinutes?: number } = {}) {
  const q = queueDriver({ concurrency: 1, testingTimeoutMinutes: 600, stallAlertMinutes: 30, ...config });
  const emitted = () => q.log.flatMap((a) => (a.type === 'emit' && a.event.type.startsWith('queue.') ? [a.event.type] : []));
  return Object.assign(q, { emitted });
}

test('no progress for 30 minutes with PRs in line: stalled once, with a wake-up at the deadline; the next run finishing resumes it once', () => {
  const q = queue();
  const first = q.submit(1, 0); // starts testing at 0: progress
  expect(first.actions).toContainEqual({ type: 'wake_at', at: 30 * MINUTE });
  q.submit(2, 1 * MINUTE); // waits behind #1; submitting is not progress
  q.send({ type: 'tick' }, 29 * MINUTE);
  expect(q.state.stalled ?? null).toBeNull();
  q.send({ type: 'tick' }, 30 * MINUTE);
  expect(q.state.stalled).toEqual({ since: 30 * MINUTE, message: 'Nothing has started, finished or merged for 30 minutes while 2 pull requests wait.' });
  q.send({ type: 'tick' }, 45 * MINUTE);
  expect(q.emitted()).toEqual(['queue.stalled']);
  // #1's run finishes: the queue moved.
  q.send({ type: 'run_finished', runId: 'r1', passed: true, failedChecks: [] }, 50 * MINUTE);
  expect(q.state.stalled).toBeNull();
  expect(q.emitted()).toEqual(['queue.stalled', 'queue.resumed']);
});

test('an idle queue, a paused one, and one with the alert off (0) never stall; pausing a stalled queue resumes it', () => {
  const idle = queue();
  idle.send({ type: 'tick' }, 500 * MINUTE);
  expect(idle.emitted()).toEqual([]);

  const off = queue({ stallAlertMinutes: 0 });
  off.submit(1, 0);
  off.submit(2, 0);
  off.send({ type: 'tick' }, 500 * MINUTE);
  expect(off.emitted()).toEqual([]);

  const paused = queue();
  paused.submit(1, 0);
  paused.submit(2, 0);
  paused.send({ type: 'tick' }, 31 * MINUTE);
  expect(paused.emitted()).toEqual(['queue.stalled']);
  paused.send({ type: 'config_changed', config: paused.state.config, requestedState: 'PAUSED' }, 32 * MINUTE);
  paused.send({ type: 'tick' }, 200 * MINUTE);
  expect(paused.emitted()).toEqual(['queue.stalled', 'queue.resumed']);
  // Running again: the clock starts from the resume, not from the last progress.
  paused.send({ type: 'config_changed', config: paused.state.config, requestedState: 'RUNNING' }, 201 * MINUTE);
  paused.send({ type: 'tick' }, 230 * MINUTE);
  expect(paused.emitted()).toEqual(['queue.stalled', 'queue.resumed']);
  paused.send({ type: 'tick' }, 231 * MINUTE);
  expect(paused.emitted()).toEqual(['queue.stalled', 'queue.resumed', 'queue.stalled']);
});

test('a queue stuck in a host outage stalls too (the outage says why)', () => {
  const q = queue();
  q.submit(1, 0);
  q.send({ type: 'host_unavailable', message: 'merge: 502' }, 5 * MINUTE);
  q.send({ type: 'tick' }, 40 * MINUTE);
  expect(q.emitted()).toEqual(['queue.stalled']);
  expect(q.state.hostOutage).not.toBeNull();
});

test('a landing blocked for good still stalls: the runs its tries start are not progress', () => {
  const q = queue({ stallAlertMinutes: 90 });
  q.submit(1, 0);
  q.submit(2, 0);
  q.send({ type: 'landing_impossible', runId: 'r1', message: 'the App may not push mq/*' }, 1_000);
  // Every try builds one run and is refused at once, for 3 hours.
  for (let at = 1_000; at < 180 * MINUTE; ) {
    at = Math.max(at + 1_000, q.state.landingBlocked?.retryAt ?? at);
    q.send({ type: 'tick' }, at);
    const tried = q.state.runs.find((r) => r.status === 'running');
    if (tried) q.send({ type: 'landing_impossible', runId: tried.id, message: 'the App may not push mq/*' }, at + 1_000);
  }
  expect(q.state.landingBlocked?.tries).toBeGreaterThan(4);
  expect(q.emitted()).toEqual(['queue.stalled']);
});
