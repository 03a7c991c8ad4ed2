import { pino, type Logger } from 'pino';
import type { Config } from './config/env.js';

/**
 * The service's one pino logger. Secrets never reach the logs: token and
 * signature headers are redacted wherever a request is logged.
 */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>): Logger {
  return pino({
    level: config.LOG_LEVEL,
    redact: {
      paths: [
        'req.headers["x-api-token"]',
        'req.headers.authorization',
        'req.headers["x-hub-signature-256"]',
        'headers["x-api-token"]',
      ],
      censor: '[redacted]',
    },
  });
}
