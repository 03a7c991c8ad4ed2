import { decideChecks, type CheckRunFact, type CommitStatusFact } from '../../src/adapters/github/check-outcome.js';

let nextId = 1;
const run = (name: string, status: string, conclusion: string | null = null, id = nextId++): CheckRunFact => ({ id, name, status, conclusion, url: `https://github.com/runs/${id}` });
const status = (context: string, state: string): CommitStatusFact => ({ context, state, url: `https://ci.example/${context}` });

describe('decideChecks', () => {
  test.each([
    ['every required check succeeded', ['build', 'test'], [run('build', 'completed', 'success'), run('test', 'completed', 'success')], [], 'passed'],
    ['skipped counts as success', ['build'], [run('build', 'completed', 'skipped')], [], 'passed'],
    ['neutral counts as success', ['build'], [run('build', 'completed', 'neutral')], [], 'passed'],
    ['a commit status counts', ['ci/jenkins'], [], [status('ci/jenkins', 'success')], 'passed'],
    ['check runs and statuses together', ['build', 'ci/jenkins'], [run('build', 'completed', 'success')], [status('ci/jenkins', 'success')], 'passed'],
    ['a required check still running', ['build'], [run('build', 'in_progress')], [], 'waiting'],
    ['a required check not reported yet', ['build', 'test'], [run('build', 'completed', 'success')], [], 'waiting'],
    ['a pending status', ['ci/jenkins'], [], [status('ci/jenkins', 'pending')], 'waiting'],
    ['a non-required check failing does not matter', ['build'], [run('build', 'completed', 'success'), run('docs', 'completed', 'failure')], [], 'passed'],
    ['failure', ['build'], [run('build', 'completed', 'failure')], [], 'failed'],
    ['cancelled', ['build'], [run('build', 'completed', 'cancelled')], [], 'failed'],
    ['timed_out', ['build'], [run('build', 'completed', 'timed_out')], [], 'failed'],
    ['action_required', ['build'], [run('build', 'completed', 'action_required')], [], 'failed'],
    ['a failure status', ['ci/jenkins'], [], [status('ci/jenkins', 'failure')], 'failed'],
    ['an error status', ['ci/jenkins'], [], [status('ci/jenkins', 'error')], 'failed'],
    ['a failure decides without waiting for the rest', ['build', 'test'], [run('build', 'completed', 'failure'), run('test', 'queued')], [], 'failed'],
    ['a re-run replaces the failed run', ['build'], [run('build', 'completed', 'failure', 10), run('build', 'completed', 'success', 11)], [], 'passed'],
    ['a failed re-run replaces the passed run', ['build'], [run('build', 'completed', 'success', 20), run('build', 'completed', 'failure', 21)], [], 'failed'],
    ['nothing required never passes', [], [run('build', 'completed', 'success')], [], 'waiting'],
  ] as const)('%s', (_name, required, runs, statuses, verdict) => {
    expect(decideChecks([...required], [...runs], [...statuses]).verdict).toBe(verdict);
  });

  test('a failed run names its failing checks and reports every check with its link', () => {
    const decided = decideChecks(['build', 'ci/jenkins', 'test'], [run('build', 'completed', 'failure', 1), run('test', 'completed', 'success', 2)], [status('ci/jenkins', 'error')]);
    expect(decided).toEqual({
      verdict: 'failed',
      failedChecks: ['build', 'ci/jenkins'],
      checkRuns: [
        { name: 'build', url: 'https://github.com/runs/1', status: 'completed', conclusion: 'failure' },
        { name: 'test', url: 'https://github.com/runs/2', status: 'completed', conclusion: 'success' },
        { name: 'ci/jenkins', url: 'https://ci.example/ci/jenkins', status: 'completed', conclusion: 'error' },
      ],
    });
  });
});
