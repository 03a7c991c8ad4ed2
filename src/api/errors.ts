import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { Failure } from '../queue/outcome.js';
import { validationMessage } from './validation-message.js';

/** Every error body is one plain-text sentence. */
export function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('text/plain; charset=utf-8').send(message);
}

const FAILURE_STATUS: Record<Failure['kind'], number> = { invalid: 400, not_found: 404, conflict: 409, unavailable: 503 };

export function sendFailure(reply: FastifyReply, failure: Failure): FastifyReply {
  return sendError(reply, FAILURE_STATUS[failure.kind], failure.message);
}

/** Fastify's own errors that are the client's fault, with the sentence we answer. */
function clientError(error: FastifyError, limitBytes: number): { status: number; message: string } | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? { status: 415, message: 'Content-Type must be application/json.' }
        : { status: 400, message: 'Content-Length does not match the body.' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, message: `The request body is larger than the limit of ${limitBytes} bytes (${limitBytes / 1024 / 1024} MiB).` };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, message: 'The request body is empty; send a JSON object.' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, message: 'The request body is not valid JSON.' };
    default:
      break;
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
    return { status: 400, message: 'The request body is not valid JSON.' };
  }
  if (error.statusCode === 413) return { status: 413, message: 'The request body is too large.' };
  if (error.statusCode === 415) return { status: 415, message: 'Content-Type must be application/json.' };
  return null;
}

/** One error handler for the whole server: plain text, never a stack trace. */
export function registerErrorHandling(app: FastifyInstance, limitBytes: number): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      return sendError(reply, 400, validationMessage(error.validation, error.validationContext ?? 'body'));
    }
    const known = clientError(error, limitBytes);
    if (known) return sendError(reply, known.status, known.message);
    request.log.error({ err: error }, 'unexpected error');
    return sendError(reply, 500, `Internal server error; quote request id ${request.id} when reporting it.`);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 404, `No endpoint ${request.method} ${(request.url.split('?')[0] ?? '').slice(0, 200)}; see /v1/openapi.json.`),
  );
}
