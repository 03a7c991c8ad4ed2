import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { renderQueueMetrics, METRICS_CONTENT_TYPE } from '../../queue/queue-metrics.js';
import { getTestingDetails } from '../../queue/testing-details.js';
import { forbidOtherOrganizations } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { sendError, sendFailure } from '../errors.js';
import { metricsQuery } from '../schemas/metrics.js';
import { testingDetailsRequest, testingDetailsView } from '../schemas/testing-details.js';

/** getMergeQueueTestingDetails and getMergeQueueMetrics. */
export function testingAndMetricsRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/getMergeQueueTestingDetails', {
      schema: {
        tags: ['Testing'],
        summary: 'Read a test run, by testRunId or by a pull request (its current or last run)',
        body: testingDetailsRequest,
        response: { 200: testingDetailsView },
      },
      handler: async (request, reply) => {
        const { repo, targetBranch, testRunId, pr } = request.body;
        const result = await getTestingDetails(deps.stores, { repo, targetBranch, testRunId, prNumber: pr?.number });
        if (!result.ok) return sendFailure(reply, result.failure);
        return result.value;
      },
    });

    app.get('/getMergeQueueMetrics', {
      schema: {
        tags: ['Metrics'],
        summary: "Queue metrics of the token's organization in the text exposition format",
        querystring: metricsQuery,
        // Documented as the text it is, not as a JSON string.
        response: {
          200: {
            description: 'Metrics in the text exposition format, version 0.0.4.',
            content: { [METRICS_CONTENT_TYPE]: { schema: z.string() } },
          },
        },
      },
      handler: async (request, reply) => {
        const token = request.apiToken;
        if (!token) return sendError(reply, 401, 'The x-api-token header is missing.');
        const { repo, repoHost } = request.query;
        let queues;
        if (repo && repoHost) {
          const [owner = '', name = ''] = repo.split('/');
          if (forbidOtherOrganizations(request, reply, { host: repoHost, owner, name })) return reply;
          queues = await deps.stores.queues.listForOrg(repoHost, owner, { host: repoHost, owner, name });
          if (queues.length === 0) return sendError(reply, 404, `No queue exists for ${repo} on ${repoHost}.`);
        } else {
          if (repoHost && forbidOtherOrganizations(request, reply, { host: repoHost, owner: token.owner })) return reply;
          queues = await deps.stores.queues.listForOrg(token.host, token.owner);
        }
        const text = await renderQueueMetrics(deps.stores, queues, deps.now(), (queueId) => deps.enqueuedCache.enqueued(deps.stores, queueId));
        // Sent as a ready string so no JSON serializer touches it.
        return reply.type(METRICS_CONTENT_TYPE).serializer((payload) => payload as string).send(text);
      },
    });
  };
}
