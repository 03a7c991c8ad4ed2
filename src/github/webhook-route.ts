import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../api/errors.js';
import type { DeliveryStore } from '../ports/delivery-store.js';
import { MAX_DELIVERY_ATTEMPTS, type DeliveryHandler } from './delivery-handler.js';
import { recordedBody, WEBHOOK_BODY_LIMIT_BYTES } from './recorded-body.js';

export const WEBHOOK_PATH = '/api/github/webhooks';

/** Bodies up to this size are read without counting: GitHub's usual deliveries are a few KiB. */
const SMALL_BODY_BYTES = 1024 * 1024;
/**
 * Larger bodies are read only while those being read add up to less than this. Anyone can send the headers, and the
 * signature can be checked only once the whole body is read (found by review: a hundred parallel 25 MiB bodies held
 * gigabytes before any was refused). Past it a delivery is a 503: the redelivery sweep asks GitHub for it again.
 */
export const LARGE_BODIES_BUDGET_BYTES = 4 * 25 * 1024 * 1024;
/**
 * A large body not read whole within this long is cut off: GitHub itself gives a delivery 10 s, so a slower upload is
 * not GitHub's, and a slow sender cannot hold its share of the budget for the server's whole request time-out.
 */
export const LARGE_BODY_READ_MS = 10_000;

/** The little of Probot's webhooks the route needs. */
export interface WebhookReceiver {
  verify(payload: string, signature: string): Promise<boolean>;
  receive(event: { id: string; name: string; payload: unknown }): Promise<void>;
}

/**
 * GitHub's webhook endpoint, in its own plugin scope: the body is kept as the
 * exact string GitHub sent, because the signature is over those bytes (parsing
 * and re-serializing JSON would change them). The route verifies, records the
 * delivery durably and answers 202; the handlers run after the answer, so a
 * slow GitHub never makes a delivery time out. A delivery id is applied once; one the service gave up
 * on (every attempt failed) is handled again when GitHub redelivers it.
 */
export function webhookRoute(options: { receiver: WebhookReceiver; deliveries: DeliveryStore; handler: DeliveryHandler; now?: () => Date; largeBodiesBudgetBytes?: number; largeBodyReadMs?: number }): FastifyPluginAsync {
  const now = options.now ?? (() => new Date());
  const budget = options.largeBodiesBudgetBytes ?? LARGE_BODIES_BUDGET_BYTES;
  let largeBodiesBytes = 0;
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: WEBHOOK_BODY_LIMIT_BYTES }, (_request, body, done) => done(null, body));

    // The headers are checked before the body is read (up to 25 MiB, from anyone): a caller without them costs nothing.
    const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
      if (!header(request, 'x-github-event') || !header(request, 'x-github-delivery')) return sendError(reply, 400, 'A GitHub webhook needs the x-github-event and x-github-delivery headers.');
      if (!header(request, 'x-hub-signature-256')) return sendError(reply, 401, 'The x-hub-signature-256 header is missing.');
      // A body without a stated length (chunked) counts as the largest allowed.
      const stated = Number(request.headers['content-length']);
      const bytes = Number.isFinite(stated) && stated >= 0 ? stated : WEBHOOK_BODY_LIMIT_BYTES;
      if (bytes <= SMALL_BODY_BYTES || bytes > WEBHOOK_BODY_LIMIT_BYTES) return; // The latter: a 413 from the body limit.
      if (largeBodiesBytes + bytes > budget) {
        reply.header('retry-after', '60');
        return sendError(reply, 503, 'Too many large webhook bodies are being read at once; redeliver this one.');
      }
      largeBodiesBytes += bytes;
      let held = true;
      const cut = setTimeout(() => request.raw.destroy(), options.largeBodyReadMs ?? LARGE_BODY_READ_MS);
      cut.unref();
      const release = () => {
        clearTimeout(cut);
        if (!held) return;
        held = false;
        largeBodiesBytes -= bytes;
      };
      request.raw.once('end', () => clearTimeout(cut)); // read whole: handled however long that takes
      // Cut off or gone before the whole body came; a body read whole counts until the answer (Node closes the request
      // stream once read: found by review).
      request.raw.once('close', () => {
        if (!request.raw.complete) release();
      });
      reply.raw.once('close', release);
      reply.raw.once('finish', release);
    };

    app.post(WEBHOOK_PATH, { schema: { hide: true }, bodyLimit: WEBHOOK_BODY_LIMIT_BYTES, onRequest }, async (request, reply) => {
      const name = header(request, 'x-github-event') as string;
      const id = header(request, 'x-github-delivery') as string;
      const signature = header(request, 'x-hub-signature-256') as string;
      const body = typeof request.body === 'string' ? request.body : '';
      // GitHub always sends a payload; the verifier throws on an empty one (found by review: a 500 and an error-level log
      // line for any unauthenticated caller).
      if (body.length === 0) return sendError(reply, 400, 'The webhook payload is empty.');
      if (!(await options.receiver.verify(body, signature))) return sendError(reply, 401, 'The webhook signature does not match the payload.');
      try {
        JSON.parse(body);
      } catch {
        return sendError(reply, 400, 'The webhook payload is not valid JSON.');
      }
      // A body too large for a document is recorded gzipped; one that does not fit even so is handled before answering.
      const recorded = await recordedBody(body);
      const inline = recorded === null;
      const receivedAt = now();
      const received = { id, name, payloadJson: recorded ?? '', receivedAt };
      if (!(await options.deliveries.record(received))) {
        // GitHub's "Redeliver" (the same id) of a delivery given up is handled again; handled or still being retried, it is a duplicate.
        if (!(await options.deliveries.rearm(received, MAX_DELIVERY_ATTEMPTS))) {
          request.log.info({ delivery: id, event: name }, 'webhook delivery already received');
          return reply.code(200).type('text/plain; charset=utf-8').send('Already received.');
        }
        request.log.warn({ delivery: id, event: name }, 'webhook delivery given up before is redelivered: handled again');
      }
      const delivery = { id, name, payloadJson: body, receivedAt, attempts: 1, lastAttemptAt: receivedAt, lastFailedAt: null, aliveAt: null };
      if (inline) {
        // Too large to record: handled now, and refused if that fails so GitHub's redelivery can retry it.
        if (!(await options.handler.handle(delivery, true))) {
          await options.deliveries.forget(id);
          return sendError(reply, 500, 'The webhook could not be handled; redeliver it.');
        }
        return reply.code(200).type('text/plain; charset=utf-8').send('Applied.');
      }
      options.handler.handleSoon(delivery);
      return reply.code(202).type('text/plain; charset=utf-8').send('Accepted.');
    });
  };
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
