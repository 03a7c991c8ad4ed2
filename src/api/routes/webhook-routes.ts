import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { WebhookService, Org } from '../../webhooks/webhook-service.js';
import { API_TOKEN_HEADER } from '../auth.js';
import { sendError, sendFailure } from '../errors.js';
import {
  createWebhookRequest,
  createWebhookResponse,
  deleteWebhookResponse,
  listWebhookDeliveriesRequest,
  listWebhookDeliveriesResponse,
  listWebhooksRequest,
  listWebhooksResponse,
  redeliverWebhookRequest,
  rotateWebhookSecretRequest,
  rotateWebhookSecretResponse,
  updateWebhookRequest,
  webhookDeliveryView,
  webhookIdRequest,
  webhookView,
} from '../schemas/webhooks.js';

const tags = ['Webhooks'];

/** The caller's organization; the auth hook has already answered 401 when there is none. */
function orgOf(request: FastifyRequest, reply: FastifyReply): Org | null {
  const token = request.apiToken;
  if (!token) {
    sendError(reply, 401, `The ${API_TOKEN_HEADER} header is missing.`);
    return null;
  }
  return { host: token.host, owner: token.owner };
}

/** Outgoing webhook subscriptions of the token's organization. */
export function webhookRoutes(webhooks: WebhookService): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/createWebhook', {
      schema: {
        tags,
        summary: "Register an endpoint for the organization's queue events; answers the signing secret, once",
        body: createWebhookRequest,
        response: { 200: createWebhookResponse },
      },
      handler: async (request, reply) => {
        const org = orgOf(request, reply);
        if (!org) return reply;
        const created = await webhooks.create(org, request.body);
        if (!created.ok) return sendFailure(reply, created.failure);
        return created.value;
      },
    });

    app.post('/listWebhooks', {
      schema: { tags, summary: "The organization's webhooks (never their secrets), with why any is disabled", body: listWebhooksRequest, response: { 200: listWebhooksResponse } },
      handler: async (request, reply) => {
        const org = orgOf(request, reply);
        if (!org) return reply;
        return { webhooks: await webhooks.list(org) };
      },
    });

    app.post('/updateWebhook', {
      schema: { tags, summary: 'Change a webhook (omitted fields are unchanged); enabled: true re-enables it and forgets its failures', body: updateWebhookRequest, response: { 200: webhookView } },
      handler: async (request, reply) => {
        const org = orgOf(request, reply);
        if (!org) return reply;
        const updated = await webhooks.update(org, request.body);
        if (!updated.ok) return sendFailure(reply, updated.failure);
        return updated.value;
      },
    });

    app.post('/deleteWebhook', {
      schema: { tags, summary: 'Delete a webhook and its undelivered deliveries', body: webhookIdRequest, response: { 200: deleteWebhookResponse } },
      handler: async (request, reply) => {
        const org = orgOf(request, reply);
        if (!org) return reply;
        const deleted = await webhooks.delete(org, request.body);
        if (!deleted.ok) return sendFailure(reply, deleted.failure);
        return { deleted: true as const, id: deleted.value.id };
      },
    });

    app.post('/rotateWebhookSecret', {
      schema: {
        tags,
        summary: 'Issue a new signing secret; the previous one keeps signing alongside for graceMinutes',
        body: rotateWebhookSecretRequest,
        response: { 200: rotateWebhookSecretResponse },
      },
      handler: async (request, reply) => {
        const org = orgOf(request, reply);
        if (!org) return reply;
        const rotated = await webhooks.rotateSecret(org, request.body);
        if (!rotated.ok) return sendFailure(reply, rotated.failure);
        return rotated.value;
      },
    });

    app.post('/listWebhookDeliveries', {
      schema: { tags, summary: "A webhook's deliveries, newest first, with paging", body: listWebhookDeliveriesRequest, response: { 200: listWebhookDeliveriesResponse } },
      handler: async (request, reply) => {
        const org = orgOf(request, reply);
        if (!org) return reply;
        const page = await webhooks.listDeliveries(org, request.body);
        if (!page.ok) return sendFailure(reply, page.failure);
        return page.value;
      },
    });

    app.post('/redeliverWebhook', {
      schema: { tags, summary: 'Deliver one delivery again now (same webhook-id), whatever its status', body: redeliverWebhookRequest, response: { 200: webhookDeliveryView } },
      handler: async (request, reply) => {
        const org = orgOf(request, reply);
        if (!org) return reply;
        const redelivered = await webhooks.redeliver(org, request.body);
        if (!redelivered.ok) return sendFailure(reply, redelivered.failure);
        return redelivered.value;
      },
    });
  };
}
