/**
 * Exit codes `mq` promises to scripts, and the error that carries one. Every
 * failure is reported as one line on stderr: "mq: <what went wrong>".
 */
export const EXIT = {
  ok: 0,
  /** Bad usage or input, or a 4xx from the server other than 401/403/404. */
  usage: 1,
  /** Not signed in, or the server refused the token (401) or its organization (403). */
  auth: 2,
  /** The queue or pull request does not exist (404). */
  notFound: 3,
  /** The server could not be reached, timed out, or failed (5xx). */
  unavailable: 4,
} as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A message on one line, whatever it held: newlines and runs of spaces collapse, and it is cut at `max`. */
export function oneLine(text: string, max = 500): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export const usageError = (message: string) => new CliError(message, EXIT.usage);
