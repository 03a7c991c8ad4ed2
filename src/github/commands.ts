import { MAX_PRIORITY_VALUE, PRIORITY_NAMES, type PriorityName } from '../domain/priority.js';

/** A queue command written in a PR comment. */
export type QueueCommand =
  | { kind: 'merge'; priority?: number; noBatch: boolean }
  | { kind: 'cancel' }
  | { kind: 'restart' };

export type ParsedComment =
  | { kind: 'none' } // Not addressed to the queue.
  | { kind: 'command'; command: QueueCommand }
  | { kind: 'invalid'; message: string };

const USAGE = 'Usage: `/mq merge [--priority=urgent|high|medium|low|0-255] [--no-batch]`, `/mq cancel`, `/mq restart`.';

/**
 * Reads `/mq ...` from the first line of a comment that starts with it (GitHub
 * users quote and discuss commands; only a comment that begins with one counts).
 */
export function parseComment(body: string): ParsedComment {
  const firstLine = body.trimStart().split(/\r?\n/, 1)[0]?.trim() ?? '';
  const words = firstLine.split(/\s+/);
  if (words[0]?.toLowerCase() !== '/mq') return { kind: 'none' };
  const [verb = '', ...options] = words.slice(1).map((w) => w.toLowerCase());
  switch (verb) {
    case 'merge':
      return parseMerge(options);
    case 'cancel':
    case 'restart':
      return options.length === 0 ? { kind: 'command', command: { kind: verb } } : { kind: 'invalid', message: `\`/mq ${verb}\` takes no options. ${USAGE}` };
    default:
      return { kind: 'invalid', message: `Unknown command \`/mq ${verb}\`. ${USAGE}` };
  }
}

function parseMerge(options: string[]): ParsedComment {
  let priority: number | undefined;
  let noBatch = false;
  for (const option of options) {
    if (option === '--no-batch') {
      noBatch = true;
      continue;
    }
    const match = /^--priority=(.+)$/.exec(option);
    if (!match) return { kind: 'invalid', message: `Unknown option \`${option}\`. ${USAGE}` };
    const value = match[1] as string;
    // Own keys only: `in` would also take Object.prototype's (`constructor`, `__proto__`) for names.
    if (Object.hasOwn(PRIORITY_NAMES, value)) priority = PRIORITY_NAMES[value as PriorityName];
    else if (/^\d{1,3}$/.test(value) && Number(value) <= MAX_PRIORITY_VALUE) priority = Number(value);
    else return { kind: 'invalid', message: `\`${value}\` is not a priority: use urgent, high, medium, low or 0-255.` };
  }
  return { kind: 'command', command: { kind: 'merge', ...(priority !== undefined ? { priority } : {}), noBatch } };
}
