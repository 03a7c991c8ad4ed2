import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { queueFileJsonSchema } from '../../src/queue-file/queue-file-schema.js';
import { checkQueueFile, readQueueFileText } from '../../src/queue-file/read-queue-file.js';

const VALID = `# The queues of this repository
queues:
  main:
    mode: parallel
    concurrency: 3
    mergeMethod: Squash
    requiredStatuses: [ci, lint]
  release:
    batch: true
    batchingMinSize: "4"
  docs: {}
`;

test('a valid file reads as the API would read the same settings (case-insensitive enums, digits as strings)', () => {
  const read = readQueueFileText(VALID);
  expect(read).toEqual({
    ok: true,
    file: {
      queues: {
        main: { mode: 'parallel', concurrency: 3, mergeMethod: 'squash', requiredStatuses: ['ci', 'lint'] },
        release: { batch: true, batchingMinSize: 4 },
        docs: {},
      },
    },
  });
});

test('every problem is reported at once, each with its line and setting', () => {
  const text = ['queues:', '  main:', '    concurrency: 0', '    mergeMethod: fast-forward', '    concurency: 2', '  release:', '    stallAlertMinutes: lots', 'extra: 1', ''].join('\n');
  const read = readQueueFileText(text);
  if (read.ok) throw new Error('expected problems');
  expect(read.problems.map((p) => [p.line, p.path])).toEqual([
    [3, 'queues.main.concurrency'],
    [4, 'queues.main.mergeMethod'],
    [5, 'queues.main.concurency'],
    [7, 'queues.release.stallAlertMinutes'],
    [8, 'extra'],
  ]);
  expect(read.problems[0]?.message).toMatch(/>=\s*1|at least 1|too small/i);
  expect(read.problems[2]?.message).toMatch(/`concurency` is not a setting/);
});

test('YAML that does not parse names its line; so do duplicate keys', () => {
  const broken = readQueueFileText('queues:\n  main:\n    concurrency: [1\n');
  expect(broken.ok).toBe(false);
  if (!broken.ok) expect(broken.problems[0]?.message).toMatch(/^Not valid YAML/);
  const duplicate = readQueueFileText('queues:\n  main:\n    batch: true\n    batch: false\n');
  expect(duplicate.ok).toBe(false);
  if (!duplicate.ok) expect(duplicate.problems[0]).toMatchObject({ line: 4 });
});

test('a setting the API refuses in the file too: branch names, queue state, sizes', () => {
  const read = readQueueFileText('queues:\n  "bad branch":\n    batch: true\n  main:\n    state: PAUSED\n');
  if (read.ok) throw new Error('expected problems');
  expect(read.problems.map((p) => p.line)).toEqual([2, 5]);
  expect(checkQueueFile({ queues: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`b${i}`, {}])) }).ok).toBe(false);
  expect(checkQueueFile(null).ok).toBe(false);
});

test('the published JSON Schema accepts the valid file and refuses the invalid one, and the committed copy is current', () => {
  const schema = queueFileJsonSchema();
  const ajv = new Ajv2020({ strict: false });
  const validate = ajv.compile(schema);
  expect(validate(parse(VALID.replace('Squash', 'squash').replace('"4"', '4')))).toBe(true);
  expect(validate({ queues: { main: { concurrency: 0 } } })).toBe(false);
  expect(validate({ queues: { main: { concurency: 2 } } })).toBe(false);
  // `_extends` is taken off by the loader before the file is checked: editors must not flag it (found by review).
  expect(validate({ _extends: '.github', queues: { main: { batch: true } } })).toBe(true);
  expect(validate({ _extends: '.github' })).toBe(true); // its queues come from the file it extends
  expect(validate({ _extends: 3, queues: {} })).toBe(false);
  expect(validate({ extends: '.github', queues: {} })).toBe(false);
  const committed = JSON.parse(readFileSync(new URL('../../docs/merge-queue.schema.json', import.meta.url), 'utf8')) as unknown;
  // After changing a setting: npm run schema:queue-file
  expect(committed).toEqual(schema);
});
