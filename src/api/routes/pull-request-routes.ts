import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { PRIORITY_NAMES } from '../../domain/priority.js';
import { isTerminal } from '../../domain/pull-request-state.js';
import { listPullRequests } from '../../queue/list-pull-requests.js';
import { pullRequestView, pullRequestViews } from '../../queue/views.js';
import {
  getSubmittedPullRequestRequest,
  listPullRequestsRequest,
  listPullRequestsResponse,
  pullRequestRequest,
  pullRequestView as pullRequestViewSchema,
  setImpactedTargetsRequest,
  setImpactedTargetsResponse,
  submitPullRequestRequest,
} from '../schemas/pull-request.js';
import type { ApiDeps } from '../deps.js';
import { sendFailure } from '../errors.js';

const tags = ['Pull requests'];
const response = { 200: pullRequestViewSchema };

/** The pull-request endpoints: submit, cancel, restart, read, targets, list. */
export function pullRequestRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  const { stores, pullRequests } = deps;

  return async (app) => {
    app.post('/submitPullRequest', {
      schema: { tags, summary: 'Submit a pull request to the queue (re-submitting updates priority and noBatch)', body: submitPullRequestRequest, response },
      handler: async (request, reply) => {
        const { repo, targetBranch, pr, priority, noBatch, riskHint } = request.body;
        const result = await pullRequests.submit({
          repo,
          targetBranch,
          prNumber: pr.number,
          priority: typeof priority === 'string' ? PRIORITY_NAMES[priority] : priority,
          noBatch,
          riskHint,
        });
        if (!result.ok) return sendFailure(reply, result.failure);
        return pullRequestView(stores, result.value.queue, result.value.entry, result.value.targets === null ? { targets: null } : {});
      },
    });

    app.post('/cancelPullRequest', {
      schema: { tags, summary: 'Remove a pull request from the queue', body: pullRequestRequest, response },
      handler: async (request, reply) => {
        const { repo, targetBranch, pr } = request.body;
        const result = await pullRequests.cancel({ repo, targetBranch, prNumber: pr.number });
        if (!result.ok) return sendFailure(reply, result.failure);
        return pullRequestView(stores, result.value.queue, result.value.entry);
      },
    });

    app.post('/restartTestsOnPullRequest', {
      schema: { tags, summary: 'Re-run the tests of a pull request that is TESTING or PENDING_FAILURE', body: pullRequestRequest, response },
      handler: async (request, reply) => {
        const { repo, targetBranch, pr } = request.body;
        const result = await pullRequests.restart({ repo, targetBranch, prNumber: pr.number });
        if (!result.ok) return sendFailure(reply, result.failure);
        return pullRequestView(stores, result.value.queue, result.value.entry);
      },
    });

    app.post('/getSubmittedPullRequest', {
      schema: { tags, summary: 'Read the status of a submitted pull request', body: getSubmittedPullRequestRequest, response },
      handler: async (request, reply) => {
        const { repo, targetBranch, pr, includeTimeline } = request.body;
        const result = await pullRequests.readStatus({ repo, targetBranch, prNumber: pr.number });
        if (!result.ok) return sendFailure(reply, result.failure);
        const { queue, entry, targets } = result.value;
        const view = await pullRequestView(stores, queue, entry, { includeTimeline: includeTimeline === true, targets });
        if (isTerminal(entry.state) || entry.state === 'NOT_READY') return view;
        const at = (await deps.runner.mergeForecast(queue.id)).byEntry.get(entry.id);
        return at === undefined ? view : { ...view, estimatedMergeAt: new Date(at).toISOString() };
      },
    });

    app.post('/setImpactedTargets', {
      schema: {
        tags,
        summary: 'Set the impacted targets of a pull request head (parallel queues); the PR need not be submitted yet',
        body: setImpactedTargetsRequest,
        response: { 200: setImpactedTargetsResponse },
      },
      handler: async (request, reply) => {
        const { repo, targetBranch, pr, impactedTargets } = request.body;
        const result = await pullRequests.setImpactedTargets({ repo, targetBranch, prNumber: pr.number, sha: pr.sha, targets: impactedTargets });
        if (!result.ok) return sendFailure(reply, result.failure);
        const { entry, count } = result.value;
        return {
          prNumber: pr.number,
          sha: pr.sha,
          impactedTargets: count === 'ALL' ? ('ALL' as const) : { count },
          isCurrentlySubmittedToQueue: entry !== null && !isTerminal(entry.state),
        };
      },
    });

    app.post('/listPullRequests', {
      schema: { tags, summary: 'List pull requests of the queue, newest first, with filters and paging', body: listPullRequestsRequest, response: { 200: listPullRequestsResponse } },
      handler: async (request, reply) => {
        const { repo, targetBranch, state, since, until, take, cursor } = request.body;
        const result = await listPullRequests(stores, {
          repo,
          targetBranch,
          states: state === undefined ? undefined : Array.isArray(state) ? state : [state],
          since: since ? new Date(since) : undefined,
          until: until ? new Date(until) : undefined,
          take,
          cursor,
        });
        if (!result.ok) return sendFailure(reply, result.failure);
        const pullRequests = await pullRequestViews(stores, result.value.queue, result.value.entries);
        return { pullRequests, ...(result.value.nextCursor ? { nextCursor: result.value.nextCursor } : {}) };
      },
    });
  };
}
