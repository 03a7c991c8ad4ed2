import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { createQueueRequest, deleteQueueResponse, queueRequest, queueView, updateQueueRequest } from '../schemas/queue.js';
import { findQueue } from '../../queue/queue-service.js';
import { queueView as renderQueue } from '../../queue/views.js';
import type { ApiDeps } from '../deps.js';
import { sendFailure } from '../errors.js';

const tags = ['Queues'];

/** createQueue, getQueue, updateQueue, deleteQueue. */
export function queueRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/createQueue', {
      schema: { tags, summary: 'Create a queue for a branch', body: createQueueRequest, response: { 200: queueView } },
      handler: async (request, reply) => {
        const created = await deps.queues.create(request.body);
        if (!created.ok) return sendFailure(reply, created.failure);
        return renderQueue(deps.stores, created.value);
      },
    });

    app.post('/getQueue', {
      schema: { tags, summary: 'Read queue state, configuration and enqueued pull requests', body: queueRequest, response: { 200: queueView } },
      handler: async (request, reply) => {
        const found = await findQueue(deps.stores, request.body.repo, request.body.targetBranch);
        if (!found.ok) return sendFailure(reply, found.failure);
        return renderQueue(deps.stores, found.value, deps.enqueuedCache);
      },
    });

    app.post('/updateQueue', {
      schema: { tags, summary: 'Update queue state and configuration (omitted fields are unchanged)', body: updateQueueRequest, response: { 200: queueView } },
      handler: async (request, reply) => {
        const updated = await deps.queues.update(request.body);
        if (!updated.ok) return sendFailure(reply, updated.failure);
        return renderQueue(deps.stores, updated.value);
      },
    });

    app.post('/deleteQueue', {
      schema: { tags, summary: 'Delete an empty queue', body: queueRequest, response: { 200: deleteQueueResponse } },
      handler: async (request, reply) => {
        const deleted = await deps.queues.delete(request.body);
        if (!deleted.ok) return sendFailure(reply, deleted.failure);
        return { deleted: true as const, id: deleted.value.id };
      },
    });
  };
}
