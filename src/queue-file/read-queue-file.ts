import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { z } from 'zod';
import { queueFileSchema, type QueueFile } from './queue-file-schema.js';

/** One thing wrong with the file, where it is (1-based line) and what to do. */
export interface QueueFileProblem {
  line: number;
  /** The setting's path, e.g. `queues.main.concurrency` (empty for the file as a whole). */
  path: string;
  message: string;
}

export type QueueFileReading = { ok: true; file: QueueFile } | { ok: false; problems: QueueFileProblem[] };

/**
 * Reads the text of a queue file: YAML errors and every setting the schema
 * refuses, each with its line, so the check run can point at it. Returns all
 * problems at once (a review should not need one push per typo).
 */
export function readQueueFileText(text: string): QueueFileReading {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    return { ok: false, problems: doc.errors.map((e) => ({ line: lines.linePos(e.pos[0]).line, path: '', message: `Not valid YAML: ${e.message.split('\n')[0]}` })) };
  }
  return checkQueueFile(doc.toJS() ?? {}, (path) => lineOf(doc, lines, path));
}

/**
 * Checks an already parsed configuration (e.g. a file merged with the one it
 * `_extends`) with the API's schema; `locate` finds a setting's line, or null
 * when it is not in the file at hand.
 */
export function checkQueueFile(value: unknown, locate: (path: PropertyKey[]) => number | null = () => null): QueueFileReading {
  const parsed = queueFileSchema.safeParse(value);
  if (parsed.success) return { ok: true, file: parsed.data };
  return { ok: false, problems: parsed.error.issues.flatMap((issue) => problemsOf(issue, locate)).sort((a, b) => a.line - b.line) };
}

function problemsOf(issue: z.core.$ZodIssue, locate: (path: PropertyKey[]) => number | null): QueueFileProblem[] {
  const path = issue.path;
  const where = (p: PropertyKey[]) => {
    // A missing setting has no line of its own: the nearest enclosing one that exists.
    for (let n = p.length; n >= 0; n--) {
      const line = locate(p.slice(0, n));
      if (line !== null) return line;
    }
    return 1;
  };
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ line: where([...path, key]), path: dotted([...path, key]), message: `\`${key}\` is not a setting${path.length === 0 ? ' (the file holds `queues:`)' : ''}; see the README's settings or the JSON Schema.` }));
  }
  return [{ line: where(path), path: dotted(path), message: issue.message }];
}

function dotted(path: PropertyKey[]): string {
  return path.map(String).join('.');
}

/** The line of the key (for a mapping entry) or value at `path`. */
function lineOf(doc: Document, lines: LineCounter, path: PropertyKey[]): number | null {
  let node: unknown = doc.contents;
  let keyNode: Node | null = null;
  for (const step of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(step));
      if (!pair) return null;
      keyNode = pair.key as Node;
      node = pair.value;
    } else if (isSeq(node)) {
      node = node.items[Number(step)];
      keyNode = null;
      if (node === undefined) return null;
    } else {
      return null;
    }
  }
  const at = (keyNode ?? (node as Node | null))?.range?.[0];
  return at === undefined ? null : lines.linePos(at).line;
}
