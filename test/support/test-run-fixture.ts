import type { TestRunRecord } from '../../src/domain/records.js';

/** A stored test run for tests that need one without running the engine; override what matters. */
export function testRunFixture(queueId: string, overrides: Partial<Omit<TestRunRecord, 'id'>> = {}): Omit<TestRunRecord, 'id'> {
  return {
    queueId,
    status: 'in_progress',
    baseSha: 'b'.repeat(40),
    testBranch: 'mq/main/test-1',
    testBranchSha: 'c'.repeat(40),
    testedPullRequests: [],
    dependentPullRequests: [],
    isBisection: false,
    requiredStatuses: [],
    requiredStatusesSource: 'none',
    checkRuns: [],
    statusChecks: [],
    failureStatuses: [],
    impactedTargets: null,
    createdAt: new Date('2033-01-01T10:00:00Z'),
    finishedAt: null,
    ...overrides,
  };
}
