import type { FastifyPluginAsync } from 'fastify';
import { sendError } from '../api/errors.js';
import type { DeliveryStore } from '../ports/delivery-store.js';

/** GitHub's own cap on webhook payloads. */
export const WEBHOOK_BODY_LIMIT_BYTES = 25 * 1024 * 1024;
export const WEBHOOK_PATH = '/api/github/webhooks';

/** The little of Probot's webhooks the route needs. */
export interface WebhookReceiver {
  verify(payload: string, signature: string): Promise<boolean>;
  receive(event: { id: string; name: string; payload: unknown }): Promise<void>;
}

/**
 * GitHub's webhook endpoint, in its own plugin scope: the body is kept as the
 * exact string GitHub sent, because the signature is over those bytes (parsing
 * and re-serializing JSON would change them). A delivery id is applied once;
 * if its handling fails, the claim is released so GitHub's redelivery works.
 */
export function webhookRoute(options: { receiver: WebhookReceiver; deliveries: DeliveryStore; now?: () => Date }): FastifyPluginAsync {
  const now = options.now ?? (() => new Date());
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: WEBHOOK_BODY_LIMIT_BYTES }, (_request, body, done) => done(null, body));

    app.post(WEBHOOK_PATH, { schema: { hide: true }, bodyLimit: WEBHOOK_BODY_LIMIT_BYTES }, async (request, reply) => {
      const header = (name: string) => {
        const value = request.headers[name];
        return typeof value === 'string' ? value : undefined;
      };
      const name = header('x-github-event');
      const id = header('x-github-delivery');
      const signature = header('x-hub-signature-256');
      if (!name || !id) return sendError(reply, 400, 'A GitHub webhook needs the x-github-event and x-github-delivery headers.');
      if (!signature) return sendError(reply, 401, 'The x-hub-signature-256 header is missing.');
      const body = typeof request.body === 'string' ? request.body : '';
      if (!(await options.receiver.verify(body, signature))) return sendError(reply, 401, 'The webhook signature does not match the payload.');
      let payload: unknown;
      try {
        payload = JSON.parse(body);
      } catch {
        return sendError(reply, 400, 'The webhook payload is not valid JSON.');
      }
      if (!(await options.deliveries.claim(id, now()))) {
        request.log.info({ delivery: id, event: name }, 'webhook delivery already applied');
        return reply.code(200).type('text/plain; charset=utf-8').send('Already applied.');
      }
      try {
        await options.receiver.receive({ id, name, payload });
      } catch (error) {
        await options.deliveries.release(id);
        throw error;
      }
      return reply.code(200).type('text/plain; charset=utf-8').send('Applied.');
    });
  };
}
