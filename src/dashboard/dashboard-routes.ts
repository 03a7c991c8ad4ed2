import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { listQueuesRequest, listQueuesResponse, queueBoard, queueHealthRequest, queueHealthView } from '../api/schemas/dashboard.js';
import { queueRequest } from '../api/schemas/queue.js';
import type { ApiDeps } from '../api/deps.js';
import { sendError, sendFailure } from '../api/errors.js';
import { findQueue } from '../queue/queue-service.js';
import { asOfOneDecision } from '../queue/consistent-read.js';
import { queueBoard as buildBoard } from './queue-board.js';
import { queueHealth } from './queue-health.js';
import { queueSummaries, type DaySummary } from './queue-summaries.js';
import { RecordedMemo } from '../concurrency/recorded-memo.js';
import type { QueueBoard } from '../api/schemas/dashboard.js';

const tags = ['Dashboard'];
const HOUR_MS = 60 * 60 * 1000;

/**
 * What the dashboard reads, as v1 endpoints (same token or session, same
 * organization rule): the organization's queues at a glance, one queue's
 * board, and a queue's health over a window.
 */
export function dashboardRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  // What the pages show of each queue's last day, kept while its runner records nothing (the pages ask every second).
  const days = new RecordedMemo<DaySummary>(60_000, () => deps.now().getTime());
  const recent = new RecordedMemo<QueueBoard['recentlyEnded']>(60_000, () => deps.now().getTime());
  return async (app) => {
    app.post('/listQueues', {
      schema: { tags, summary: "The token's organization's queues, each with its depth, PRs testing, merges in the last day and problems", body: listQueuesRequest, response: { 200: listQueuesResponse } },
      handler: async (request, reply) => {
        const token = request.apiToken;
        if (!token) return sendError(reply, 401, 'No token.');
        const queues = await deps.stores.queues.listForOrg(token.host, token.owner);
        return { queues: await queueSummaries(deps.stores, queues, deps.now().getTime(), deps.enqueuedCache, days) };
      },
    });

    app.post('/getQueueBoard', {
      schema: { tags, summary: "A queue's runs in flight, its waiting PRs with their forecast merge times, and the PRs that ended in the last day", body: queueRequest, response: { 200: queueBoard } },
      handler: async (request, reply) => {
        const found = await findQueue(deps.stores, request.body.repo, request.body.targetBranch);
        if (!found.ok) return sendFailure(reply, found.failure);
        const queue = found.value;
        return asOfOneDecision(deps.stores, queue.id, async () => {
          const [inFlight, forecast] = await Promise.all([deps.runner.runsInFlight(queue.id), deps.runner.mergeForecast(queue.id)]);
          return buildBoard(deps.stores, queue, inFlight, forecast, deps.now().getTime(), deps.enqueuedCache, recent);
        });
      },
    });

    app.post('/getQueueHealth', {
      schema: { tags, summary: 'Time in queue, merges, CI runs per merged PR, ejections by reason and restarts over a window, from stored facts', body: queueHealthRequest, response: { 200: queueHealthView } },
      handler: async (request, reply) => {
        const found = await findQueue(deps.stores, request.body.repo, request.body.targetBranch);
        if (!found.ok) return sendFailure(reply, found.failure);
        const to = deps.now().getTime();
        const from = to - request.body.hours * HOUR_MS;
        const since = new Date(from);
        const [entries, runs] = await Promise.all([deps.stores.entries.listChangedSince(found.value.id, since), deps.stores.testRuns.listFinishedSince(found.value.id, since)]);
        const health = queueHealth(entries, runs, { from, to, bucketMs: request.body.bucketMinutes * 60_000 });
        return {
          ...health,
          from: new Date(health.from).toISOString(),
          to: new Date(health.to).toISOString(),
          bucketMinutes: request.body.bucketMinutes,
          buckets: health.buckets.map((b) => ({ ...b, start: new Date(b.start).toISOString() })),
        };
      },
    });
  };
}
