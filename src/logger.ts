import { pino, type DestinationStream, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import type { Config } from './config/env.js';

export interface LoggerOutput {
  /** Where the lines go (default: stdout). */
  destination?: DestinationStream;
  /** Whether that destination is a terminal (default: process.stdout.isTTY). */
  isTTY?: boolean;
}

/** Paths pino replaces with '[redacted]' before a line is written, whatever the format. */
export const REDACTED_PATHS = [
  'req.headers["x-api-token"]',
  'req.headers.authorization',
  'req.headers["x-hub-signature-256"]',
  // Dashboard sessions: the cookie is the credential, the CSRF token its second half.
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  'headers["x-api-token"]',
];

/**
 * The service's one pino logger. Secrets never reach the logs: token and
 * signature headers are redacted wherever a request is logged.
 *
 * LOG_FORMAT picks the lines: `json` (one object a line, for collectors) or
 * `pretty` (for people); unset, pretty on a terminal and JSON otherwise. Pretty
 * lines are coloured only on a terminal. Redaction happens in pino before either
 * format sees the line.
 */
export function createLogger(config: Pick<Config, 'LOG_LEVEL' | 'LOG_FORMAT'>, output: LoggerOutput = {}): Logger {
  const isTTY = output.isTTY ?? process.stdout.isTTY === true;
  const format = config.LOG_FORMAT ?? (isTTY ? 'pretty' : 'json');
  const options = {
    level: config.LOG_LEVEL,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  if (format === 'json') return output.destination ? pino(options, output.destination) : pino(options);

  // Formatted in the logging call itself (no transform stream, no worker): a line
  // logged just before process.exit is written like a JSON one would be.
  const prettify = pinoPretty.prettyFactory({
    colorize: isTTY,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: false,
  });
  const destination = output.destination ?? pino.destination(1);
  return pino(options, { write: (line: string) => void destination.write(prettify(line)) });
}
