import { isTerminal } from '../domain/pull-request-state.js';
import type { HostEvents } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import type { QueueRunner } from './queue-runner.js';

/**
 * Turns what a host reports (CI finished, a PR or branch changed) into inbox
 * inputs for the queues concerned. Only translation and database reads: the
 * runner decides, and reads the host itself, in the background.
 */
export function hostEvents(runner: QueueRunner, stores: Stores): HostEvents {
  return {
    async testRunFinished(report) {
      const run = await stores.testRuns.findById(report.queueId, report.runId);
      if (!run || run.status !== 'in_progress' || !run.engineRunId) return; // Cancelled or already reported.
      await runner.record(report.queueId, {
        type: 'test_run_reported',
        testRunId: run.id,
        engineRunId: run.engineRunId,
        passed: report.passed,
        checkRuns: report.checkRuns,
        failedChecks: report.failedChecks,
      });
    },

    async pullRequestChanged(repo, prNumber) {
      for (const queue of await stores.queues.listForOrg(repo.host, repo.owner, repo)) {
        const entry = await stores.entries.find(queue.id, prNumber);
        if (!entry || isTerminal(entry.state)) continue;
        await runner.record(queue.id, { type: 'refresh_pull_request', prNumber });
      }
    },

    async branchMoved(repo, branch, sha) {
      const queue = await stores.queues.find(repo, branch);
      if (queue) await runner.record(queue.id, { type: 'base_moved', sha });
    },
  };
}
