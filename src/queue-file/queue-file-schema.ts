import { z } from 'zod';
import { branchSchema } from '../api/schemas/common.js';
import { noTunedSettingWithAdaptive, updateQueueFields } from '../api/schemas/queue.js';

/** Where a repository keeps its queues' settings, reviewed like code (Probot's `.github/` convention). */
export const QUEUE_FILE_PATH = '.github/merge-queue.yml';

/**
 * One queue's settings in the file: every `updateQueue` setting, checked by the
 * API's own schema. `state` stays out (pausing is an operator's act, not a
 * review's), and so does `deleteRequiredStatuses` (leave `requiredStatuses` out
 * instead). Unknown keys are errors here, unlike in the API: a typo in a file
 * would otherwise be silently ignored until someone wonders why.
 */
export const queueFileSettings = updateQueueFields.omit({ repo: true, targetBranch: true, state: true, deleteRequiredStatuses: true }).strict().superRefine(noTunedSettingWithAdaptive);
export type QueueFileSettings = z.infer<typeof queueFileSettings>;

/** The most queues one file may name. */
export const MAX_QUEUES_PER_FILE = 50;

export const queueFileSchema = z
  .object({
    queues: z
      .record(branchSchema, queueFileSettings.nullable())
      .refine((queues) => Object.keys(queues).length <= MAX_QUEUES_PER_FILE, `at most ${MAX_QUEUES_PER_FILE} queues per file`)
      .describe('One queue per target branch, keyed by the branch name; a queue left empty (`main: {}`) takes every default.'),
  })
  .strict()
  .describe(`The merge queue's settings (${QUEUE_FILE_PATH}): every updateQueue setting per target branch.`);
export type QueueFile = z.infer<typeof queueFileSchema>;

/** The file's JSON Schema, for editors (yaml-language-server) and `GET /schemas/merge-queue.schema.json`. */
export function queueFileJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(queueFileSchema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown>; required?: string[] };
  return {
    ...schema,
    // A file of `_extends` alone takes its queues from the file it extends: `queues` is checked once they are merged.
    required: (schema.required ?? []).filter((key) => key !== 'queues'),
    // Probot's config loader takes `_extends` off before the file is checked (queue-file-sync.ts); an editor must accept it too.
    properties: {
      ...schema.properties,
      _extends: { type: 'string', description: 'Start from another file: `.github` (the organization\'s), `owner/repo`, or `repo:path.yml`; this file\'s settings win, its lists replace the extended ones.' },
    },
    $id: 'merge-queue.schema.json',
    title: 'Merge queue settings',
  };
}
