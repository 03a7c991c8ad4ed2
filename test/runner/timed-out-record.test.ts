import { recordRunCancelled, type ActionContext } from '../../src/runner/execute-actions.js';
import { TIMED_OUT_PREFIX, type TestRunRecord } from '../../src/domain/records.js';
import type { TestRunChange } from '../../src/ports/stores.js';

function context(run: Partial<TestRunRecord>) {
  const updates: Array<{ id: string; change: TestRunChange }> = [];
  const ctx = {
    queue: { id: 'q' },
    now: () => 5_000,
    stores: {
      testRuns: {
        findByEngineRunId: async () => ({ id: 'run1', status: 'in_progress', requiredStatuses: ['ci', 'lint'], ...run }),
        update: async (id: string, change: TestRunChange) => void updates.push({ id, change }),
      },
    },
  } as unknown as ActionContext;
  return { ctx, updates };
}

test('a timed-out run is recorded failed, naming each required check that had not reported', async () => {
  const { ctx, updates } = context({});
  await recordRunCancelled(ctx, 'r1', true);
  expect(updates).toEqual([{ id: 'run1', change: { status: 'failed', finishedAt: new Date(5_000), failureStatuses: [`${TIMED_OUT_PREFIX}ci`, `${TIMED_OUT_PREFIX}lint`] } }]);
});

test('any other cancel is recorded cancelled; a run already ended is left alone', async () => {
  const cancelled = context({});
  await recordRunCancelled(cancelled.ctx, 'r1');
  expect(cancelled.updates).toEqual([{ id: 'run1', change: { status: 'cancelled', finishedAt: new Date(5_000) } }]);
  const ended = context({ status: 'succeeded' });
  await recordRunCancelled(ended.ctx, 'r1', true);
  expect(ended.updates).toEqual([]);
});
