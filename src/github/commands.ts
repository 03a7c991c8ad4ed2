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
      return { kind: 'invalid', message: `Unknown command ${codeSpan(`/mq ${verb}`)}. ${USAGE}` };
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
    if (!match) return { kind: 'invalid', message: `Unknown option ${codeSpan(option)}. ${USAGE}` };
    const value = match[1] as string;
    // Own keys only: `in` would also take Object.prototype's (`constructor`, `__proto__`) for names.
    if (Object.hasOwn(PRIORITY_NAMES, value)) priority = PRIORITY_NAMES[value as PriorityName];
    else if (/^\d{1,3}$/.test(value) && Number(value) <= MAX_PRIORITY_VALUE) priority = Number(value);
    else return { kind: 'invalid', message: `${codeSpan(value)} is not a priority: use urgent, high, medium, low or 0-255.` };
  }
  return { kind: 'command', command: { kind: 'merge', ...(priority !== undefined ? { priority } : {}), noBatch } };
}

/** Longest part of a commenter's word echoed back: enough to recognise it, too short to carry a message. */
const ECHO_MAX = 40;

/**
 * A commenter's word as inline code in the App's reply, whatever it holds: fenced by one backtick more than its
 * longest run of backticks (CommonMark), so it can neither close the span early nor become a link or an @mention
 * under the App's name.
 */
export function codeSpan(word: string): string {
  const text = word.length > ECHO_MAX ? `${word.slice(0, ECHO_MAX)}…` : word;
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}
