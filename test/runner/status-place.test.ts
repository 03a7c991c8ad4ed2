/**
 * A status shows the PR's place in line and forecast merge time only where the PR has them: waiting or testing.
 * One not admitted yet (NOT_READY) or ended has neither, and its status does not ask for them: in a long queue
 * the forecast is a pass over every PR, and every PR submitted before its targets or checks are known is NOT_READY.
 */
import type { PullRequestState } from '../../src/domain/pull-request-state.js';
import type { PullRequestStatusUpdate } from '../../src/ports/git-host.js';
import { executeHostAction, type ActionContext } from '../../src/runner/execute-actions.js';
import { queueRecord } from '../github/github-fixtures.js';

function statusContext() {
  const shown: PullRequestStatusUpdate[] = [];
  const asked = { positions: 0, forecasts: 0 };
  const host = { reportPullRequestStatus: async (report: PullRequestStatusUpdate) => void shown.push(report) };
  const ctx = {
    queue: queueRecord({ repo: { host: 'sandbox', owner: 'o', name: 'r' } }),
    stores: { testRuns: { findByEngineRunId: async () => null, latestForPr: async () => null } },
    hosts: { forHost: () => host },
    now: () => 0,
    positionOf: () => (asked.positions++, 3),
    queuedPullRequest: () => ({ prNumber: 7, headSha: 'abc' }),
    estimatedMergeAt: async () => (asked.forecasts++, Date.parse('2026-01-01T00:00:00Z')),
  } as unknown as ActionContext;
  const publish = (state: PullRequestState) => executeHostAction(ctx, { type: 'publish_status', entryId: 'e7', prNumber: 7, state, reason: 'ready' });
  return { shown, asked, publish };
}

test.each(['PENDING', 'TESTING'] as const)('a %s PR shows its place and forecast', async (state) => {
  const { shown, asked, publish } = statusContext();
  await publish(state);
  expect(shown[0]).toMatchObject({ state, position: 3, estimatedMergeAt: new Date('2026-01-01T00:00:00Z') });
  expect(asked).toEqual({ positions: 1, forecasts: 1 });
});

test.each(['NOT_READY', 'MERGED', 'CANCELLED'] as const)('a %s PR shows neither, and none is computed', async (state) => {
  const { shown, asked, publish } = statusContext();
  await publish(state);
  expect(shown[0]?.state).toBe(state);
  expect(shown[0]).not.toHaveProperty('position');
  expect(shown[0]).not.toHaveProperty('estimatedMergeAt');
  expect(asked).toEqual({ positions: 0, forecasts: 0 });
});
