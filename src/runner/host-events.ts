import { isTerminal } from '../domain/pull-request-state.js';
import type { GitHostRegistry, HostEvents } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import { engineFacts, engineTargets } from './engine-inputs.js';
import type { QueueRunner } from './queue-runner.js';

/**
 * Turns what a host reports (CI finished, a PR or branch changed) into engine
 * events for the queues concerned. Only translation: the runner decides.
 */
export function hostEvents(runner: QueueRunner, stores: Stores, hosts: GitHostRegistry, now: () => number = Date.now): HostEvents {
  return {
    async testRunFinished(report) {
      const run = await stores.testRuns.findById(report.queueId, report.runId);
      if (!run || run.status !== 'in_progress' || !run.engineRunId) return; // Cancelled or already reported.
      await stores.testRuns.update(run.id, {
        status: report.passed ? 'succeeded' : 'failed',
        finishedAt: new Date(now()),
        checkRuns: report.checkRuns,
        failureStatuses: report.failedChecks,
      });
      await runner.dispatch(report.queueId, { type: 'run_finished', runId: run.engineRunId, passed: report.passed, failedChecks: report.failedChecks });
    },

    async pullRequestChanged(repo, prNumber) {
      const facts = await hosts.forHost(repo.host)?.readPullRequest(repo, prNumber);
      if (!facts) return;
      for (const queue of await stores.queues.listForOrg(repo.host, repo.owner, repo)) {
        const entry = await stores.entries.find(queue.id, prNumber);
        if (!entry || isTerminal(entry.state)) continue;
        entry.facts = facts;
        await stores.entries.save(entry, []);
        await runner.dispatch(queue.id, { type: 'pr_facts_changed', prNumber, facts: engineFacts(facts), merged: facts.merged });
        const targets = await engineTargets(stores, queue.id, prNumber, facts.headSha);
        if (targets) await runner.dispatch(queue.id, { type: 'impacted_targets_set', prNumber, targets });
      }
    },

    async branchMoved(repo, branch, sha) {
      const queue = await stores.queues.find(repo, branch);
      if (queue) await runner.dispatch(queue.id, { type: 'base_moved', sha });
    },
  };
}
