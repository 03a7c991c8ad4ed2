import { DIRECT_MERGE_MODES, MERGE_METHODS, QUEUE_MODES, TUNED_SETTINGS, TUNINGS } from '../../../src/domain/queue-config.js';
import type { QueueView } from '../api.js';

/** The settings the page edits: every updateQueue setting but `state` (the queue page's buttons) and the identity. */
export type SettingKey =
  | 'mode'
  | 'concurrency'
  | 'testingTimeoutMinutes'
  | 'requiredStatuses'
  | 'retryFailedTests'
  | 'tuning'
  | (typeof TUNED_SETTINGS)[number]
  | 'mergeMethod'
  | 'directMergeMode'
  | 'enqueueingLabel'
  | 'commentsEnabled'
  | 'commandsEnabled'
  | 'statusCheckEnabled'
  | 'createPrsForTestingBranches'
  | 'labelingBots'
  | 'stallAlertMinutes';

export interface SettingField {
  key: SettingKey;
  label: string;
  kind: 'number' | 'boolean' | 'choice' | 'text' | 'list';
  choices?: readonly string[];
  min?: number;
  max?: number;
  hint: string;
}

/** The form, in groups, each field with what it does (the API's own words, shortened). */
export const SETTING_GROUPS: Array<{ title: string; fields: SettingField[] }> = [
  {
    title: 'Testing',
    fields: [
      { key: 'mode', label: 'Mode', kind: 'choice', choices: QUEUE_MODES, hint: 'single: one line of runs; parallel: lanes by the targets PRs touch.' },
      { key: 'concurrency', label: 'Concurrency', kind: 'number', min: 1, hint: 'Test runs at once (CI capacity the queue may use).' },
      { key: 'testingTimeoutMinutes', label: 'Testing timeout (minutes)', kind: 'number', min: 1, hint: 'A run without a result after this long fails.' },
      { key: 'requiredStatuses', label: 'Required checks', kind: 'list', hint: 'Comma-separated check names; empty: the branch protection decides.' },
      { key: 'retryFailedTests', label: 'Retries of a failed PR', kind: 'number', min: 0, max: 5, hint: 'A PR whose own run failed is tested again this many times before it is ejected.' },
    ],
  },
  {
    title: 'Batching and failures',
    fields: [
      { key: 'tuning', label: 'Tuning', kind: 'choice', choices: TUNINGS, hint: 'adaptive: the queue chooses the settings below from its break rate and PRs\' risk; fixed: they are used as given.' },
      { key: 'batch', label: 'Batch', kind: 'boolean', hint: 'Test several PRs in one run.' },
      { key: 'batchingMinSize', label: 'Batch size', kind: 'number', min: 1, hint: 'The fewest PRs a batch waits for (its size adapts to the failure rate above it).' },
      { key: 'batchingMaxWaitTimeMinutes', label: 'Batch wait (minutes)', kind: 'number', min: 0, hint: 'The longest a smaller batch waits to fill.' },
      { key: 'bisectionConcurrency', label: 'Bisection concurrency', kind: 'number', min: 1, hint: 'Parts of a failed batch tested at once while it is split to find the culprit.' },
      { key: 'pendingFailureDepth', label: 'Pending failure depth', kind: 'number', min: 0, hint: 'A failure behind a PR still testing waits for this many runs behind it before it is decided.' },
      { key: 'canOptimisticallyMerge', label: 'Optimistic merge', kind: 'boolean', hint: 'A later passing run that holds a pending failure proves it, and lands everything it holds.' },
    ],
  },
  {
    title: 'Landing',
    fields: [
      { key: 'mergeMethod', label: 'Merge method', kind: 'choice', choices: MERGE_METHODS, hint: 'How PRs land on the branch.' },
      { key: 'directMergeMode', label: 'Direct merge', kind: 'choice', choices: DIRECT_MERGE_MODES, hint: 'always: a PR up to date with the branch, its own CI passed and nothing ahead lands without a run.' },
    ],
  },
  {
    title: 'On the pull request',
    fields: [
      { key: 'enqueueingLabel', label: 'Label', kind: 'text', hint: 'The label that queues a PR.' },
      { key: 'labelingBots', label: 'Bots that may label', kind: 'list', hint: 'Comma-separated bot accounts whose label counts as a writer\'s, e.g. dependabot[bot].' },
      { key: 'commandsEnabled', label: 'Comment commands', kind: 'boolean', hint: '/mq merge, /mq cancel, /mq restart.' },
      { key: 'commentsEnabled', label: 'Comments', kind: 'boolean', hint: 'A comment on the PR when it is ejected.' },
      { key: 'statusCheckEnabled', label: 'Check run', kind: 'boolean', hint: 'The PR\'s "Merge Queue" check run.' },
      { key: 'createPrsForTestingBranches', label: 'Draft PRs for test branches', kind: 'boolean', hint: 'A draft PR for each test branch, for CI that builds only pull requests.' },
    ],
  },
  {
    title: 'Alerts',
    fields: [{ key: 'stallAlertMinutes', label: 'Stall alert (minutes)', kind: 'number', min: 0, hint: 'Minutes without progress while PRs wait before the queue says it is stalled; 0: off.' }],
  },
];

/** What the form shows: text for numbers and lists (as typed), booleans as they are. */
export type FormValues = Record<SettingKey, string | boolean>;

export function formValuesOf(queue: QueueView): FormValues {
  const values = {} as FormValues;
  for (const field of SETTING_GROUPS.flatMap((g) => g.fields)) {
    const value = queue[field.key];
    values[field.key] = field.kind === 'list' ? (Array.isArray(value) ? value.join(', ') : '') : typeof value === 'boolean' ? value : String(value);
  }
  return values;
}

/** Chosen by the queue while the form's tuning is adaptive: shown, not editable, never sent. */
export function chosenByQueue(key: SettingKey, values: FormValues): boolean {
  return values.tuning === 'adaptive' && (TUNED_SETTINGS as readonly string[]).includes(key);
}

/**
 * The updateQueue body for what the form changed, and only that: a setting someone else changed since the page read
 * the queue is not put back. Numbers are sent as numbers when they read as one, else as typed (the API says what is
 * wrong with them, in the same words as for any client).
 */
export function changedSettings(loaded: FormValues, values: FormValues): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of SETTING_GROUPS.flatMap((g) => g.fields)) {
    const { key } = field;
    if (values[key] === loaded[key] || chosenByQueue(key, values)) continue;
    const value = values[key];
    if (field.kind === 'list') {
      const names = String(value)
        .split(/[,\n]/)
        .map((name) => name.trim())
        .filter((name) => name !== '');
      if (names.join(', ') === loaded[key]) continue;
      // No required checks is said by deleting them (the branch protection decides again); other lists are sent empty.
      if (names.length === 0 && key === 'requiredStatuses') body.deleteRequiredStatuses = true;
      else body[key] = names;
    } else if (field.kind === 'number') {
      const text = String(value).trim();
      body[key] = /^\d+$/.test(text) ? Number(text) : text;
    } else {
      body[key] = value;
    }
  }
  return body;
}
