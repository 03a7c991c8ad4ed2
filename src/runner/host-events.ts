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

    async hostAccess(queueId, change) {
      // The same pause as an outage: nothing starts, lands or times out; it lifts when access returns. Access returning
      // ends only what access caused: failures of the runner's actions go on until one of them goes through.
      await runner.record(queueId, change.available ? { type: 'host_recovered', cause: 'access' } : { type: 'host_unavailable', message: change.message, cause: 'access' });
    },

    async branchMoved(repo, branch, sha, options) {
      const queue = await stores.queues.find(repo, branch);
      if (!queue) return;
      // Landings only move the branch forward: one that lost commits was reset by someone, maybe to a head the queue
      // replaced itself, which a read would otherwise take for a stale report.
      if (options?.rewound) return runner.record(queue.id, { type: 'base_head_changed', rewound: true });
      // The push of the queue's own landing names a commit it tested: the engine takes it as that merge's result,
      // and reads the head if it came late (apply-event.ts base_moved, `landing`). Any other push is only a hint
      // (late, reordered, or one of several): the head is read.
      if (await stores.testRuns.testedCommit(queue.id, sha)) await runner.record(queue.id, { type: 'base_moved', sha, landing: true });
      else await runner.record(queue.id, { type: 'base_head_changed' });
    },
  };
}
